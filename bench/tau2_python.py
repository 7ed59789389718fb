"""tau2-bench's own Python, measured for `npm run bench` (bench/tau2-anchor.ts prints it beside ours).

Usage: python3 bench/tau2_python.py <tau2-bench src dir> <tau2 data dir> calls <n>
       python3 bench/tau2_python.py <tau2-bench src dir> <tau2 data dir> score <airline|retail>
       python3 bench/tau2_python.py <tau2-bench src dir> <tau2 data dir> writes -

The data dir holds tau2/domains/airline/ and tau2/domains/retail/ (what tau2 reads from
TAU2_DATA_DIR). Prints one JSON document.

`calls`: per domain, the median wall time (µs) of `n` warm tool calls through
`Environment.get_response` (one read, one idempotent write, repeated on the same environment), and
the median `copy.deepcopy` of the airline DB (what a fork of tau2's environment costs), ms.

`score`: per task with reference actions, the wall and CPU time (ms) of tau2's
`EnvironmentEvaluator` + `ActionEvaluator` on the reference trajectory (gold replay on a fresh
environment from `get_environment`, the trajectory's replay, DB hash comparison and action
matching); `setup_ms`, the time spent building the reference trajectories (each reference call
answered by a live environment: not scoring work, so the caller subtracts it from the process's
wall time); and the import and load times. The caller times the whole process from spawn to exit.

`writes` (bench/tau2-writes.ts): a server on stdin/stdout, one JSON document a line each way, so
that the caller can interleave blocks of its own calls with tau2's. A request
`{"domain", "tool", "args": [argument sets], "n", "start", "check"}` makes `n` calls of `tool`
through `Environment.get_response`, call i with argument set (start + i) mod len(args), each on the DB as the
environment was built (the rows the call may change, its user, reservation or order and the
flights it names, are deep-copied before it and put back after it, untimed; a booking's new
reservation is removed). Only `get_response` is timed (the ToolCall is built before). It answers
`{"us": [wall µs per call]}`, with `"contents"` (each argument set's first answer) and `"same_db"`
(the DB hash after the puts-back equals the hash before) when `check` is true, or `{"error"}`.

Modules tau2-bench imports but none of these paths uses (its runner's, UI's and LLM dependencies)
are stand-ins installed below: any attribute is a do-nothing class. loguru's logger does nothing;
toml reads through tomllib; addict's Dict merges recursively.
"""

import copy
import importlib.abc
import importlib.machinery
import json
import statistics
import sys
import time
import tomllib
import types

STAND_INS = {"loguru", "addict", "toml", "pandas", "deepdiff", "dotenv", "yaml", "docstring_parser", "litellm", "httpx", "rich"}


class _Any:
    def __init__(self, *a, **k):
        pass

    def __call__(self, *a, **k):
        return _Any()

    def __getattr__(self, n):
        return _Any()

    def __class_getitem__(cls, item):
        return cls


class _Dict(dict):
    def update(self, *a, **k):
        for key, v in dict(*a, **k).items():
            if isinstance(v, dict) and isinstance(self.get(key), dict):
                d = _Dict(self[key])
                d.update(v)
                self[key] = d
            else:
                self[key] = v


def _toml_load(f):
    if isinstance(f, str):
        with open(f, "rb") as fp:
            return tomllib.load(fp)
    return tomllib.load(f)


SPECIAL = {
    "loguru": {"logger": _Any()},
    "addict": {"Dict": _Dict},
    "toml": {"load": _toml_load, "loads": tomllib.loads},
}


class _StandIns(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in STAND_INS:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        m = types.ModuleType(spec.name)
        m.__path__ = []
        for k, v in SPECIAL.get(spec.name, {}).items():
            setattr(m, k, v)
        m.__getattr__ = lambda n: (_ for _ in ()).throw(AttributeError(n)) if n.startswith("__") else _Any
        return m

    def exec_module(self, module):
        pass


def median_us(fn, n):
    fn()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def touched(db, domain, args):
    """The DB entries a write tool may change for these arguments: (collection, key) pairs."""
    out = []
    uid = args.get("user_id")
    own = db.reservations if domain == "airline" else db.orders
    key = args.get("reservation_id" if domain == "airline" else "order_id")
    if key in own:
        out.append((own, key))
        uid = uid or own[key].user_id
    if uid in db.users:
        out.append((db.users, uid))
    for f in args.get("flights") or [] if domain == "airline" else []:
        if f["flight_number"] in db.flights:
            out.append((db.flights, f["flight_number"]))
    return out


def serve_writes(mods, ToolCall):
    envs = {name: mod.get_environment() for name, (mod, _) in mods.items()}
    for line in sys.stdin:
        req = json.loads(line)
        env = envs[req["domain"]]
        db = env.tools.db
        own = db.reservations if req["domain"] == "airline" else db.orders
        hash0 = env.get_db_hash() if req.get("check") else None
        times, contents = [], []
        error = None
        for i in range(req["n"]):
            args = req["args"][(req.get("start", 0) + i) % len(req["args"])]
            saved = [(c, k, copy.deepcopy(c[k])) for c, k in touched(db, req["domain"], args)]
            keys = len(own)
            tc = ToolCall(id=f"w{i}", name=req["tool"], arguments=args, requestor="assistant")
            t0 = time.perf_counter()
            msg = env.get_response(tc)
            times.append((time.perf_counter() - t0) * 1e6)
            for c, k, v in saved:
                c[k] = v
            if len(own) != keys:  # a booking's new reservation (dicts keep insertion order)
                for k in list(own)[keys:]:
                    del own[k]
            if msg.error:
                error = f"{req['tool']} {json.dumps(args)}: {msg.content}"
                break
            if req.get("check") and i < len(req["args"]):
                contents.append(msg.content)
        if error:
            out = {"error": error}
        else:
            out = {"us": times}
            if req.get("check"):
                out["contents"] = contents
                out["same_db"] = env.get_db_hash() == hash0
        print(json.dumps(out), flush=True)


def main():
    src, data, mode, arg = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    sys.meta_path.insert(0, _StandIns())
    sys.path.insert(0, src)
    import os

    os.environ["TAU2_DATA_DIR"] = data
    t_import = time.perf_counter()
    from tau2.data_model.message import AssistantMessage, ToolCall
    from tau2.evaluator.evaluator_action import ActionEvaluator
    from tau2.evaluator.evaluator_env import EnvironmentEvaluator
    import tau2.domains.airline.environment as airline
    import tau2.domains.retail.environment as retail

    out = {"python": sys.version.split()[0], "import_ms": (time.perf_counter() - t_import) * 1000}
    picks = {
        "airline": (airline, ("get_reservation_details", "update_reservation_passengers")),
        "retail": (retail, ("get_order_details", "modify_user_address")),
    }
    if mode == "writes":
        print(json.dumps({"python": out["python"]}), flush=True)
        serve_writes(picks, ToolCall)
        return
    if mode == "calls":
        calls = int(arg)
        out["domains"] = {}
        for name, (mod, (read, write)) in picks.items():
            env = mod.get_environment()
            args = {}
            for t in mod.get_tasks(None):
                for a in (t.evaluation_criteria.actions or []) if t.evaluation_criteria else []:
                    args.setdefault(a.name, a.arguments)
            seq = [0]

            def call(tool):
                seq[0] += 1
                msg = env.get_response(
                    ToolCall(id=f"c{seq[0]}", name=tool, arguments=args[tool], requestor="assistant")
                )
                assert not msg.error, msg.content

            d = {
                "read": {"tool": read, "us": median_us(lambda: call(read), calls)},
                "write": {"tool": write, "us": median_us(lambda: call(write), calls)},
            }
            if name == "airline":
                db = env.tools.db
                d["deepcopy_ms"] = median_us(lambda: copy.deepcopy(db), 20) / 1000
            out["domains"][name] = d
    else:
        mod = picks[arg][0]
        t0 = time.perf_counter()
        mod.get_environment()
        out["load_ms"] = (time.perf_counter() - t0) * 1000
        setup = 0.0
        per_task = {}
        for task in mod.get_tasks(None):
            if not task.evaluation_criteria or not task.evaluation_criteria.actions:
                continue
            # The reference trajectory: each reference call and tau2's own answer to it.
            s0 = time.perf_counter()
            live = mod.get_environment()
            trajectory = []
            for i, a in enumerate(task.evaluation_criteria.actions):
                tc = ToolCall(id=f"r{i}", name=a.name, arguments=a.arguments, requestor=a.requestor)
                trajectory.append(AssistantMessage(role="assistant", tool_calls=[tc]))
                trajectory.append(live.get_response(tc))
            setup += time.perf_counter() - s0
            t0, c0 = time.perf_counter(), time.process_time()
            EnvironmentEvaluator.calculate_reward(
                environment_constructor=mod.get_environment, task=task, full_trajectory=trajectory
            )
            ActionEvaluator.calculate_reward(task=task, full_trajectory=trajectory)
            per_task[task.id] = [(time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000]
        out["setup_ms"] = setup * 1000
        out["tasks"] = per_task
    print(json.dumps(out))


main()
