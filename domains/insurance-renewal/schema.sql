-- Car-insurance renewal outbound line. Money is integer fen (1 yuan = 100 fen) in columns ending _fen.
-- Dates are China Standard Time: 'YYYY-MM-DD'; timestamps 'YYYY-MM-DDTHH:MM:SS+08:00'.

CREATE TABLE policies (
  policy_id      TEXT PRIMARY KEY,
  holder_name    TEXT NOT NULL,
  phone          TEXT NOT NULL UNIQUE CHECK (length(phone) = 11),
  plate          TEXT NOT NULL,
  expires_on     TEXT NOT NULL,
  -- How many steps of the discount ladder have been released (0 = list price).
  discount_level INTEGER NOT NULL DEFAULT 0 CHECK (discount_level BETWEEN 0 AND 3),
  status         TEXT NOT NULL CHECK (status IN ('expiring', 'renewed'))
);

CREATE TABLE quotes (
  policy_id TEXT NOT NULL REFERENCES policies (policy_id),
  tier      TEXT NOT NULL CHECK (tier IN ('basic', 'standard', 'full')),
  list_fen  INTEGER NOT NULL CHECK (list_fen > 0),
  PRIMARY KEY (policy_id, tier)
);

CREATE TABLE renewal_orders (
  order_id   TEXT PRIMARY KEY,
  policy_id  TEXT NOT NULL REFERENCES policies (policy_id),
  tier       TEXT NOT NULL,
  price_fen  INTEGER NOT NULL CHECK (price_fen > 0),
  status     TEXT NOT NULL CHECK (status IN ('unpaid', 'paid')),
  created_at TEXT NOT NULL,
  paid_at    TEXT
);

CREATE TABLE callbacks (
  callback_id TEXT PRIMARY KEY,
  policy_id   TEXT NOT NULL REFERENCES policies (policy_id),
  callback_on TEXT NOT NULL,
  note        TEXT NOT NULL
);

-- The callee's side (user tools only): their payment wallet and the quote another insurer gave them.
CREATE TABLE wallet (
  phone       TEXT PRIMARY KEY,
  balance_fen INTEGER NOT NULL CHECK (balance_fen >= 0)
);

CREATE TABLE competitor_quotes (
  phone     TEXT PRIMARY KEY,
  company   TEXT NOT NULL,
  tier      TEXT NOT NULL,
  price_fen INTEGER NOT NULL CHECK (price_fen > 0)
);
