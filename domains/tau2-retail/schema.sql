-- tau2-bench retail (RetailDB) as tables. `position` keeps the order of a JSON dict's keys or a
-- list's items; `absent_fields` lists optional fields a source record left out (JSON array).
-- Prices, amounts and balances are REAL because tau2 types them float. Small free-form values
-- are JSON text: `options` (an ordered str → str dict) and lists of ids.
--
-- WITHOUT ROWID (a table clustered on its primary key: a lookup by key or key prefix is one b-tree
-- search, not the key's index and then the table) for the tables the order and user tools read
-- and write by key: user_payment_methods, user_order_ids and the four order tables. Measured
-- (issue 15 item 2, sql.js 1.17, same process, two runtimes, calls of the two alternating, medians
-- of per-block ratios, 40-80 pairs of 58-100-call blocks, load 2.6-3.5 on 2 vCPUs): each write
-- tool x0.95-0.98 (modify_pending_order_items x0.972-0.982, exchange_delivered_order_items
-- x0.951-0.970, cancel_pending_order x0.978-0.979, modify_pending_order_address x0.974,
-- return_delivered_order_items x0.960, modify_user_address x0.966), get_order_details x0.946,
-- get_user_details x0.957. product_variants as well, with its by-product index covering (alone,
-- get_product_details went through that index to each row by its text key, x1.106):
-- get_item_details x0.945, get_product_details x0.965, modify_pending_order_items x0.991,
-- exchange_delivered_order_items x0.988 (60 pairs; two rowid-schema runtimes read x0.995-1.007).
-- Left rowid tables, measured the same way: users (its zip and email indexes then lead to the text
-- key: find_user_id_by_name_zip x1.026, find_user_id_by_email x1.016), products (no gain). 4 KiB
-- pages stay: 1, 2 and 8 KiB pages made modify_pending_order_items x1.196, x0.995, x1.056 (a
-- call copies each page it first writes into the savepoint journal; small pages split rows).
-- Outputs, writes, changes and restores are the same; the write log records no rowid (`rid`) for
-- these tables, and a snapshot replays their writes by primary key (write-log.ts). That replay is
-- slower: restoring the 112 reference episodes' logged snapshots x1.2 (10.9 -> 12.8 ms a pass, 30
-- passes; its UPDATEs of orders 3.2 -> 4.2 ms, of order_items 0.74 -> 1.03; the key compared `=`
-- instead of `IS`, or to `+json_extract(…)`, the same), ~17 µs more per restore, against a few
-- µs less on every order tool call; the reference episodes' calls and changes x0.973, their gold
-- replay + scoring (`evaluate`, as bench tau2 times it) x0.992 a pass over the 112 tasks (15
-- passes, per-task median x0.968).

CREATE TABLE products (
  product_id TEXT PRIMARY KEY,
  position INTEGER NOT NULL,
  name TEXT NOT NULL
);
-- list_all_product_types reads every product's name and id in position order from this index
-- alone, without sorting them: x0.846 a call (40 pairs of 100-call blocks, load 2.4).
CREATE INDEX products_by_position ON products (position, name, product_id);

-- `Product.variants`, keyed by item id (item ids are unique across products).
CREATE TABLE product_variants (
  item_id TEXT PRIMARY KEY,
  product_id TEXT NOT NULL REFERENCES products (product_id),
  position INTEGER NOT NULL,
  options TEXT NOT NULL,
  available INTEGER NOT NULL,
  price REAL NOT NULL
) WITHOUT ROWID;
-- Covering (with the key, item_id, every column): get_product_details reads a product's variants
-- from this index alone.
CREATE INDEX product_variants_by_product ON product_variants (product_id, position, options, available, price);

CREATE TABLE users (
  user_id TEXT PRIMARY KEY,
  position INTEGER NOT NULL,
  first_name TEXT NOT NULL,
  last_name TEXT NOT NULL,
  address1 TEXT NOT NULL,
  address2 TEXT NOT NULL,
  city TEXT NOT NULL,
  country TEXT NOT NULL,
  state TEXT NOT NULL,
  zip TEXT NOT NULL,
  email TEXT NOT NULL
);
-- find_user_id_by_name_zip: covering (its query reads the zip's users in position order, with their
-- ids and names, from this index alone): x0.789 and x0.793 a call (40 pairs of 100-call blocks,
-- load 2.9), find_user_id_by_email x0.997, modify_user_address x1.018 (it rewrites the entry).
-- An email index covering `position, email` made the email lookup x10 (SQLite no longer chose it).
CREATE INDEX users_by_zip ON users (zip, position, first_name, last_name, user_id);
-- find_user_id_by_email: the users whose email lower-cased by SQLite (ASCII only) is the one asked
-- for, and apart the (usually no) users whose email has a non-ASCII character, which the tool
-- compares itself; without these a lookup scanned all users (~120 µs in sql.js, ~3 µs with).
CREATE INDEX users_by_email ON users (lower(email));
CREATE INDEX users_by_non_ascii_email ON users (position) WHERE octet_length(email) <> length(email);

-- `User.payment_methods`, keyed by method id. credit_card: brand + last_four; gift_card:
-- balance (float); paypal: nothing else.
CREATE TABLE user_payment_methods (
  user_id TEXT NOT NULL REFERENCES users (user_id),
  payment_method_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  source TEXT NOT NULL,
  brand TEXT,
  last_four TEXT,
  balance REAL,
  PRIMARY KEY (user_id, payment_method_id)
) WITHOUT ROWID;

-- `User.orders`: the order ids listed on the user, in order.
CREATE TABLE user_order_ids (
  user_id TEXT NOT NULL REFERENCES users (user_id),
  position INTEGER NOT NULL,
  order_id TEXT NOT NULL,
  PRIMARY KEY (user_id, position)
) WITHOUT ROWID;

-- exchange_items, exchange_new_items, return_items: JSON arrays of item ids, or NULL.
CREATE TABLE orders (
  order_id TEXT PRIMARY KEY,
  position INTEGER NOT NULL,
  user_id TEXT NOT NULL,
  address1 TEXT NOT NULL,
  address2 TEXT NOT NULL,
  city TEXT NOT NULL,
  country TEXT NOT NULL,
  state TEXT NOT NULL,
  zip TEXT NOT NULL,
  status TEXT NOT NULL,
  cancel_reason TEXT,
  exchange_items TEXT,
  exchange_new_items TEXT,
  exchange_payment_method_id TEXT,
  exchange_price_difference REAL,
  return_items TEXT,
  return_payment_method_id TEXT,
  absent_fields TEXT
) WITHOUT ROWID;
CREATE INDEX orders_by_user ON orders (user_id);

CREATE TABLE order_items (
  order_id TEXT NOT NULL REFERENCES orders (order_id),
  position INTEGER NOT NULL,
  name TEXT NOT NULL,
  product_id TEXT NOT NULL,
  item_id TEXT NOT NULL,
  price REAL NOT NULL,
  options TEXT NOT NULL,
  PRIMARY KEY (order_id, position)
) WITHOUT ROWID;

-- tracking_id, item_ids: JSON arrays of strings.
CREATE TABLE order_fulfillments (
  order_id TEXT NOT NULL REFERENCES orders (order_id),
  position INTEGER NOT NULL,
  tracking_id TEXT NOT NULL,
  item_ids TEXT NOT NULL,
  PRIMARY KEY (order_id, position)
) WITHOUT ROWID;

CREATE TABLE order_payment_history (
  order_id TEXT NOT NULL REFERENCES orders (order_id),
  position INTEGER NOT NULL,
  transaction_type TEXT NOT NULL,
  amount REAL NOT NULL,
  payment_method_id TEXT NOT NULL,
  PRIMARY KEY (order_id, position)
) WITHOUT ROWID;
