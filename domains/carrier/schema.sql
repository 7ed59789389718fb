-- Carrier billing line. Money is integer fen (1 yuan = 100 fen) in columns ending _fen.
-- Dates are China Standard Time: 'YYYY-MM-DD'; timestamps 'YYYY-MM-DDTHH:MM:SS+08:00'.

CREATE TABLE plans (
  plan_id         TEXT PRIMARY KEY,
  name            TEXT NOT NULL,
  monthly_fee_fen INTEGER NOT NULL CHECK (monthly_fee_fen >= 0),
  data_gb         INTEGER NOT NULL CHECK (data_gb >= 0),
  voice_minutes   INTEGER NOT NULL CHECK (voice_minutes >= 0)
);

CREATE TABLE customers (
  customer_id         TEXT PRIMARY KEY,
  name                TEXT NOT NULL,
  phone               TEXT NOT NULL UNIQUE CHECK (length(phone) = 11),
  plan_id             TEXT NOT NULL REFERENCES plans (plan_id),
  -- Plan that takes effect on the first day of the next billing cycle; NULL when none.
  next_plan_id        TEXT REFERENCES plans (plan_id),
  prepaid_balance_fen INTEGER NOT NULL CHECK (prepaid_balance_fen >= 0),
  status              TEXT NOT NULL CHECK (status IN ('active', 'suspended'))
);

CREATE TABLE bills (
  bill_id     TEXT PRIMARY KEY,
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  period      TEXT NOT NULL,            -- 'YYYY-MM'
  amount_fen  INTEGER NOT NULL CHECK (amount_fen >= 0),
  paid_fen    INTEGER NOT NULL DEFAULT 0 CHECK (paid_fen >= 0 AND paid_fen <= amount_fen),
  due_date    TEXT NOT NULL,            -- 'YYYY-MM-DD'
  status      TEXT NOT NULL CHECK (status IN ('unpaid', 'paid', 'overdue')),
  UNIQUE (customer_id, period)
);

CREATE TABLE charges (
  charge_id   TEXT PRIMARY KEY,
  bill_id     TEXT NOT NULL REFERENCES bills (bill_id),
  description TEXT NOT NULL,
  amount_fen  INTEGER NOT NULL CHECK (amount_fen > 0),
  charge_date TEXT NOT NULL,            -- 'YYYY-MM-DD'
  disputed    INTEGER NOT NULL DEFAULT 0 CHECK (disputed IN (0, 1))
);

CREATE TABLE payments (
  payment_id  TEXT PRIMARY KEY,         -- 'P0001', 'P0002', …
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  bill_id     TEXT NOT NULL REFERENCES bills (bill_id),
  amount_fen  INTEGER NOT NULL CHECK (amount_fen > 0),
  method      TEXT NOT NULL CHECK (method IN ('prepaid_balance', 'wallet')),
  paid_at     TEXT NOT NULL
);

CREATE TABLE disputes (
  dispute_id TEXT PRIMARY KEY,          -- 'D0001', 'D0002', …
  charge_id  TEXT NOT NULL REFERENCES charges (charge_id),
  reason     TEXT NOT NULL CHECK (reason IN ('not_subscribed', 'service_not_received', 'wrong_amount', 'duplicate_charge')),
  status     TEXT NOT NULL CHECK (status IN ('open', 'resolved', 'rejected')),
  created_at TEXT NOT NULL
);

-- User side (dual control): the caller's own mobile wallet, keyed by the caller's phone.
CREATE TABLE wallet (
  phone       TEXT PRIMARY KEY CHECK (length(phone) = 11),
  balance_fen INTEGER NOT NULL CHECK (balance_fen >= 0)
);

CREATE INDEX bills_by_customer ON bills (customer_id);
CREATE INDEX charges_by_bill ON charges (bill_id);
CREATE INDEX payments_by_customer ON payments (customer_id);
CREATE INDEX disputes_by_charge ON disputes (charge_id);
