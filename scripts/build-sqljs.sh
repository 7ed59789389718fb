#!/usr/bin/env bash
# Build vendor/sql.js: sql.js 1.17.0's JavaScript API over SQLite 3.54.1 compiled at -O3 (with bulk
# memory), with Switchboard's write log (native/write-log.c) linked in. The built files are committed, so
# nobody needs this script to install or run Switchboard; run it after changing write-log.c.
#
# Needs: emcc (Debian's `emscripten` package, 3.1.6, is what the committed files were built with)
# and npm (to fetch the two pinned source packages below from the registry).
#
# Sources, both checked against the sha256 of their registry tarballs:
#   - sql.js 1.17.0: its API (src/api.js), the SQLite constants it reads and its module wrapper,
#     taken from the package's unminified build dist/sql-wasm-debug.js, where the build marks
#     each included file;
#   - SQLite 3.54.1's amalgamation, as better-sqlite3 13.2.0 ships it (deps/sqlite3/sqlite3.c;
#     the same source id as sql.js 1.17.0's SQLite).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${SQLJS_OUT:-$root/vendor/sql.js} # SQLJS_OUT: build elsewhere (to compare builds)
opt=${SQLJS_OPT:--O3}           # SQLJS_OPT: the optimization level, as emcc takes it
read -ra extra <<<"${SQLJS_CFLAGS:-}" # SQLJS_CFLAGS: more compiler and linker flags (to compare builds)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

SQLJS=sql.js@1.17.0
SQLJS_SHA256=0764479cba502816fe07510a9499a941899fe3bd71c51ccf56bb8a7afdc293bc
AMALGAMATION=better-sqlite3@13.2.0
AMALGAMATION_SHA256=40487589df3496f2ee0079d22b73c63fccebe7db0e8ee9a2c42421861e321e0b

command -v emcc >/dev/null || { echo "emcc not found: apt-get install emscripten (or activate an emsdk)" >&2; exit 1; }

fetch() { # name@version sha256 → unpacked into $work/<name>
  local spec=$1 sum=$2 name=${1%@*}
  local tgz
  tgz=$(cd "$work" && npm pack --silent "$spec")
  echo "$sum  $work/$tgz" | sha256sum -c --quiet - || { echo "$spec: sha256 mismatch" >&2; exit 1; }
  mkdir -p "$work/$name" && tar -xzf "$work/$tgz" -C "$work/$name"
}
fetch "$SQLJS" "$SQLJS_SHA256"
fetch "$AMALGAMATION" "$AMALGAMATION_SHA256"

# emcc's JavaScript optimizer needs acorn, which Debian's emscripten package does not bring.
npm install --silent --no-save --prefix "$work/emdeps" acorn@8.15.0 >/dev/null
export NODE_PATH=$work/emdeps/node_modules

# sql.js's debug build, cut at the markers emcc leaves around each included file.
debug=$work/sql.js/package/dist/sql-wasm-debug.js
at() { grep -n -m1 -F -- "$1" "$debug" | cut -d: -f1; }
shell=$(at '// include: shell.js')
constants=$(at '// include: out/constants.js')
api_end=$(at '// end include: src/api.js')
postamble_end=$(at '// end include: postamble.js')
sed -n "1,$((shell - 1))p" "$debug" >"$work/shell-pre.js"
sed -n "$((constants + 1)),$((api_end - 1))p" "$debug" >"$work/api.js"
sed -n "$((postamble_end + 1)),\$p" "$debug" >"$work/shell-post.js"

# What sql.js 1.17's API needs of an older emscripten: stringToNewUTF8 is allocateUTF8 there.
cat >"$work/compat.js" <<'JS'
function stringToNewUTF8(s) { return allocateUTF8(s); }
JS
# Text between JavaScript and SQLite as stock sql.js 1.17 (a later emscripten, -Oz) converts it:
# - Emscripten 3.1.6 writes a lone UTF-16 surrogate by pairing it with the code unit after it
#   (which is lost); stock sql.js writes the surrogate's own code point in three bytes. Encode by
#   code point, so text reaches SQLite as the same bytes.
# - Stock sql.js decodes every string with TextDecoder, which turns each byte of an ill-formed
#   sequence into U+FFFD; 3.1.6 decodes strings of up to 16 bytes by hand, which does not. Decode
#   well-formed UTF-8 by hand (faster for short strings), anything else with TextDecoder.
# - Stock sql.js reads a text value whole, NUL characters included; 3.1.6 stops at the first NUL.
cat >"$work/utf8.js" <<'JS'
UTF8ArrayToString = function (heap, at, maxBytes, ignoreNul) {
  var end = at, stop = at + maxBytes;
  if (ignoreNul && maxBytes !== undefined) end = stop;
  else while (heap[end] && !(end >= stop)) end++;
  if (end - at > 16 && UTF8Decoder) return UTF8Decoder.decode(heap.subarray(at, end));
  var out = '', i = at;
  while (i < end) {
    var b0 = heap[i];
    if (b0 < 0x80) { out += String.fromCharCode(b0); i++; continue; }
    var b1 = heap[i + 1], b2 = heap[i + 2], b3 = heap[i + 3], cont = function (b) { return b >= 0x80 && b <= 0xbf; };
    if (b0 >= 0xc2 && b0 <= 0xdf && i + 1 < end && cont(b1)) {
      out += String.fromCharCode(((b0 & 31) << 6) | (b1 & 63)); i += 2; continue;
    }
    if (b0 >= 0xe0 && b0 <= 0xef && i + 2 < end && cont(b2) &&
        (b0 === 0xe0 ? b1 >= 0xa0 && b1 <= 0xbf : b0 === 0xed ? b1 >= 0x80 && b1 <= 0x9f : cont(b1))) {
      out += String.fromCharCode(((b0 & 15) << 12) | ((b1 & 63) << 6) | (b2 & 63)); i += 3; continue;
    }
    if (b0 >= 0xf0 && b0 <= 0xf4 && i + 3 < end && cont(b2) && cont(b3) &&
        (b0 === 0xf0 ? b1 >= 0x90 && b1 <= 0xbf : b0 === 0xf4 ? b1 >= 0x80 && b1 <= 0x8f : cont(b1))) {
      var cp = (((b0 & 7) << 18) | ((b1 & 63) << 12) | ((b2 & 63) << 6) | (b3 & 63)) - 0x10000;
      out += String.fromCharCode(0xd800 | (cp >> 10), 0xdc00 | (cp & 1023)); i += 4; continue;
    }
    return UTF8Decoder.decode(heap.subarray(at, end));
  }
  return out;
};
// sql.js 1.17 reads a text value with its length and ignoreNul (a NUL inside text is kept); the
// 3.1.6 UTF8ToString has no such argument.
UTF8ToString = function (ptr, maxBytes, ignoreNul) {
  return ptr ? UTF8ArrayToString(HEAPU8, ptr, maxBytes, ignoreNul) : '';
};
lengthBytesUTF8 = function (str) {
  var bytes = 0;
  for (var i = 0; i < str.length; i++) {
    var c = str.codePointAt(i);
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    if (c >= 0x10000) i++;
  }
  return bytes;
};
stringToUTF8Array = function (str, heap, at, room) {
  if (!(room > 0)) return 0;
  var start = at, last = at + room - 1;
  for (var i = 0; i < str.length; i++) {
    var c = str.codePointAt(i);
    if (c < 0x80) {
      if (at >= last) break;
      heap[at++] = c;
    } else if (c < 0x800) {
      if (at + 1 >= last) break;
      heap[at++] = 0xc0 | (c >> 6);
      heap[at++] = 0x80 | (c & 63);
    } else if (c < 0x10000) {
      if (at + 2 >= last) break;
      heap[at++] = 0xe0 | (c >> 12);
      heap[at++] = 0x80 | ((c >> 6) & 63);
      heap[at++] = 0x80 | (c & 63);
    } else {
      if (at + 3 >= last) break;
      heap[at++] = 0xf0 | (c >> 18);
      heap[at++] = 0x80 | ((c >> 12) & 63);
      heap[at++] = 0x80 | ((c >> 6) & 63);
      heap[at++] = 0x80 | (c & 63);
      i++;
    }
  }
  heap[at] = 0;
  return at - start;
};
JS
# In Node, emscripten 3.1.6 would fetch() the wasm by path (Node 18+ has fetch): read it instead.
cat >"$work/node-wasm.js" <<'JS'
if (!Module['wasmBinary']) {
  Module['wasmBinary'] = require('fs').readFileSync(
    Module['locateFile'] ? Module['locateFile']('sql-wasm.wasm', __dirname + '/') : __dirname + '/sql-wasm.wasm',
  );
}
JS
# sql.js 1.17 registers its deprecated extension functions when asked; this build has none.
cat >"$work/no-extensions.c" <<'C'
int RegisterExtensionFunctions(void *db) { (void)db; return 0; }
C

# WebAssembly features later emscripten turns on by default (Node 20, Chromium, Firefox and Safari
# 15+ have them): memcpy and memset as single instructions, among others. Measured in one process
# against stock sql.js 1.17 (-Oz, a 2026 LLVM), 30 alternating rounds: an UPDATE of 100 rows with a
# trigger x1.013 without them, x0.922 with them; a 3,000-row scan x0.85 either way.
features=(-mbulk-memory -msign-ext -mnontrapping-fptoint)
sqlite_flags=(
  "$opt" "${extra[@]}" "${features[@]}"
  # sql.js 1.17's options
  -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_DISABLE_LFS -DSQLITE_ENABLE_FTS3 -DSQLITE_ENABLE_FTS3_PARENTHESIS
  -DSQLITE_THREADSAFE=0 -DSQLITE_ENABLE_NORMALIZE -DSQLITE_ENABLE_MATH_FUNCTIONS
  # the write log's
  -DSQLITE_ENABLE_PREUPDATE_HOOK -DSQLITE_ENABLE_COLUMN_METADATA
)
amalgamation=$work/better-sqlite3/package/deps/sqlite3
emcc "${sqlite_flags[@]}" -c "$amalgamation/sqlite3.c" -o "$work/sqlite3.o"
emcc "${sqlite_flags[@]}" -I"$amalgamation" -c native/write-log.c -o "$work/write-log.o"
emcc -O3 -c "$work/no-extensions.c" -o "$work/no-extensions.o"

functions=$(
  { echo _malloc _free _RegisterExtensionFunctions _sb_write_log_attach
    grep -o '"sqlite3_[a-z0-9_]*"' "$work/api.js" | tr -d '"' | sed 's/^/_/'; } | tr ' ' '\n' | sort -u |
    sed 's/.*/"&"/' | paste -sd, -
)
runtime='["cwrap","stackAlloc","stackSave","stackRestore","UTF8ToString","allocateUTF8","lengthBytesUTF8","addFunction","removeFunction","writeArrayToMemory","getValue","setValue","FS"]'

mkdir -p "$out/dist"
for target in node browser; do
  mkdir -p "$work/$target"
  case $target in
    node) env=node pre=(--pre-js "$work/compat.js" --pre-js "$work/utf8.js" --pre-js "$work/node-wasm.js") file=sql-wasm.js ;;
    browser) env=web,worker pre=(--pre-js "$work/compat.js" --pre-js "$work/utf8.js") file=sql-wasm-browser.js ;;
  esac
  emcc "$opt" "${extra[@]}" "${features[@]}" "$work/sqlite3.o" "$work/write-log.o" "$work/no-extensions.o" \
    -s WASM=1 -s WASM_BIGINT=1 -s ALLOW_MEMORY_GROWTH=1 -s ENVIRONMENT=$env \
    -s RESERVED_FUNCTION_POINTERS=64 -s ALLOW_TABLE_GROWTH=1 -s NODEJS_CATCH_EXIT=0 -s NODEJS_CATCH_REJECTION=0 \
    -s TOTAL_STACK=5MB -s EXPORTED_FUNCTIONS="[$functions]" -s EXPORTED_RUNTIME_METHODS="$runtime" \
    "${pre[@]}" --pre-js "$work/api.js" -o "$work/$target/sql-wasm.js"
  cat "$work/shell-pre.js" "$work/$target/sql-wasm.js" "$work/shell-post.js" >"$out/dist/$file"
done
cmp -s "$work/node/sql-wasm.wasm" "$work/browser/sql-wasm.wasm" || { echo "node and browser wasm differ" >&2; exit 1; }
cp "$work/node/sql-wasm.wasm" "$out/dist/sql-wasm.wasm"
cp "$work/sql.js/package/LICENSE" "$out/LICENSE"
[ "$out" = "$root/vendor/sql.js" ] || cp "$root/vendor/sql.js/package.json" "$out/package.json"
echo "built $out/dist: $(emcc --version | head -1)"
sha256sum "$out"/dist/*
