-- Overdue-debt negotiation outbound line. Money is integer fen (1 yuan = 100 fen) in columns ending _fen.
-- Dates are China Standard Time: 'YYYY-MM-DD'; timestamps 'YYYY-MM-DDTHH:MM:SS+08:00'; callback times 'YYYY-MM-DD HH:MM'.

CREATE TABLE accounts (
  account_id    TEXT PRIMARY KEY,
  debtor_name   TEXT NOT NULL,
  phone         TEXT NOT NULL UNIQUE CHECK (length(phone) = 11),
  product       TEXT NOT NULL,
  principal_fen INTEGER NOT NULL CHECK (principal_fen > 0),
  late_fee_fen  INTEGER NOT NULL CHECK (late_fee_fen >= 0),
  overdue_since TEXT NOT NULL,
  status        TEXT NOT NULL CHECK (status IN ('overdue', 'plan', 'settled', 'disputed'))
);

-- Payments received (the creditor's ledger).
CREATE TABLE payments (
  payment_id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (account_id),
  amount_fen INTEGER NOT NULL CHECK (amount_fen > 0),
  paid_on    TEXT NOT NULL,
  source     TEXT NOT NULL
);

-- What the callee shared of their finances (written by the callee's share_finances), monthly fen.
CREATE TABLE assessments (
  account_id      TEXT PRIMARY KEY REFERENCES accounts (account_id),
  income_fen      INTEGER NOT NULL,
  expenses_fen    INTEGER NOT NULL,
  other_debts_fen INTEGER NOT NULL,
  shared_at       TEXT NOT NULL
);

CREATE TABLE plans (
  plan_id     TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL REFERENCES accounts (account_id),
  months      INTEGER NOT NULL CHECK (months > 0),
  monthly_fen INTEGER NOT NULL CHECK (monthly_fen > 0),
  hardship    INTEGER NOT NULL CHECK (hardship IN (0, 1)),
  status      TEXT NOT NULL CHECK (status IN ('pending', 'active')),
  created_at  TEXT NOT NULL
);

CREATE TABLE promises (
  promise_id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (account_id),
  amount_fen INTEGER NOT NULL CHECK (amount_fen > 0),
  due_on     TEXT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE disputes (
  dispute_id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (account_id),
  reason     TEXT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE callbacks (
  callback_id TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL REFERENCES accounts (account_id),
  callback_at TEXT NOT NULL,
  note        TEXT NOT NULL
);

-- The callee's side (user tools only): their real monthly finances, wallet and own bank records.
CREATE TABLE finances (
  phone           TEXT PRIMARY KEY,
  income_fen      INTEGER NOT NULL CHECK (income_fen >= 0),
  expenses_fen    INTEGER NOT NULL CHECK (expenses_fen >= 0),
  other_debts_fen INTEGER NOT NULL CHECK (other_debts_fen >= 0)
);

CREATE TABLE wallet (
  phone       TEXT PRIMARY KEY,
  balance_fen INTEGER NOT NULL CHECK (balance_fen >= 0)
);

CREATE TABLE bank_records (
  record_id  TEXT PRIMARY KEY,
  phone      TEXT NOT NULL,
  amount_fen INTEGER NOT NULL,
  paid_on    TEXT NOT NULL,
  payee      TEXT NOT NULL
);
