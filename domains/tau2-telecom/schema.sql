-- tau2-bench telecom as tables: the carrier's side (TelecomDB, db.toml) and the caller's phone and
-- surroundings (TelecomUserDB, user_db.toml), in one database. `position` keeps list order.
-- Floats of tau2's models are REAL, booleans 0/1, dates 'YYYY-MM-DD' and datetimes
-- 'YYYY-MM-DDTHH:MM:SS' as text, enums as their values.

-- Carrier side -----------------------------------------------------------------------------

CREATE TABLE plans (
  plan_id TEXT PRIMARY KEY,
  position INTEGER NOT NULL,
  name TEXT NOT NULL,
  data_limit_gb REAL NOT NULL,
  price_per_month REAL NOT NULL,
  data_refueling_price_per_gb REAL NOT NULL
);

CREATE TABLE devices (
  device_id TEXT PRIMARY KEY,
  position INTEGER NOT NULL,
  device_type TEXT NOT NULL CHECK (device_type IN ('phone', 'router', 'tablet', 'watch', 'other')),
  model TEXT NOT NULL,
  imei TEXT,
  is_esim_capable INTEGER NOT NULL CHECK (is_esim_capable IN (0, 1)),
  activated INTEGER NOT NULL CHECK (activated IN (0, 1)),
  activation_date TEXT,
  last_esim_transfer_date TEXT
);

CREATE TABLE lines (
  line_id TEXT PRIMARY KEY,
  position INTEGER NOT NULL,
  phone_number TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('Active', 'Suspended', 'Pending Activation', 'Closed')),
  plan_id TEXT NOT NULL,
  device_id TEXT,
  data_used_gb REAL NOT NULL,
  data_refueling_gb REAL NOT NULL,
  roaming_enabled INTEGER NOT NULL CHECK (roaming_enabled IN (0, 1)),
  contract_end_date TEXT,
  last_plan_change_date TEXT,
  last_sim_replacement_date TEXT,
  suspension_start_date TEXT
);

-- `Customer.address` is flattened (street, city, state, zip_code).
CREATE TABLE customers (
  customer_id TEXT PRIMARY KEY,
  position INTEGER NOT NULL,
  full_name TEXT NOT NULL,
  date_of_birth TEXT NOT NULL,
  email TEXT NOT NULL,
  phone_number TEXT NOT NULL,
  street TEXT NOT NULL,
  city TEXT NOT NULL,
  state TEXT NOT NULL,
  zip_code TEXT NOT NULL,
  account_status TEXT NOT NULL CHECK (account_status IN ('Active', 'Suspended', 'Pending Verification', 'Closed')),
  created_at TEXT NOT NULL,
  last_extension_date TEXT,
  goodwill_credit_used_this_year REAL NOT NULL
);

CREATE TABLE customer_payment_methods (
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  position INTEGER NOT NULL,
  method_type TEXT NOT NULL CHECK (method_type IN ('Credit Card', 'Debit Card', 'PayPal')),
  account_number_last_4 TEXT NOT NULL,
  expiration_date TEXT NOT NULL,
  PRIMARY KEY (customer_id, position)
);

-- `Customer.line_ids` and `Customer.bill_ids`: ids as listed (tau2 does not check they exist).
CREATE TABLE customer_line_ids (
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  position INTEGER NOT NULL,
  line_id TEXT NOT NULL,
  PRIMARY KEY (customer_id, position)
);

CREATE TABLE customer_bill_ids (
  customer_id TEXT NOT NULL REFERENCES customers (customer_id),
  position INTEGER NOT NULL,
  bill_id TEXT NOT NULL,
  PRIMARY KEY (customer_id, position)
);

CREATE TABLE bills (
  bill_id TEXT PRIMARY KEY,
  position INTEGER NOT NULL,
  customer_id TEXT NOT NULL,
  period_start TEXT NOT NULL,
  period_end TEXT NOT NULL,
  issue_date TEXT NOT NULL,
  total_due REAL NOT NULL,
  due_date TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('Draft', 'Issued', 'Awaiting Payment', 'Paid', 'Overdue', 'Disputed'))
);

CREATE TABLE bill_line_items (
  bill_id TEXT NOT NULL REFERENCES bills (bill_id),
  position INTEGER NOT NULL,
  description TEXT NOT NULL,
  amount REAL NOT NULL,
  date TEXT NOT NULL,
  item_type TEXT NOT NULL,
  PRIMARY KEY (bill_id, position)
);

-- Caller side ------------------------------------------------------------------------------

-- `MockPhoneAttributes`, one row. `active_apn_settings` → apn_*; `vpn_details` → vpn_* with
-- vpn_details_set = 0 when it is None.
CREATE TABLE user_device (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  sim_card_status TEXT NOT NULL CHECK (sim_card_status IN ('active', 'missing', 'locked_pin', 'locked_puk')),
  sim_card_missing INTEGER NOT NULL CHECK (sim_card_missing IN (0, 1)),
  airplane_mode INTEGER NOT NULL CHECK (airplane_mode IN (0, 1)),
  network_signal_strength TEXT NOT NULL CHECK (network_signal_strength IN ('none', 'poor', 'fair', 'good', 'excellent')),
  network_technology_connected TEXT NOT NULL CHECK (network_technology_connected IN ('none', '2G', '3G', '4G', '5G')),
  network_connection_status TEXT NOT NULL CHECK (network_connection_status IN ('connected', 'searching', 'no_service', 'emergency_only')),
  battery_level INTEGER NOT NULL,
  data_enabled INTEGER NOT NULL CHECK (data_enabled IN (0, 1)),
  roaming_enabled INTEGER NOT NULL CHECK (roaming_enabled IN (0, 1)),
  network_mode_preference TEXT NOT NULL CHECK (network_mode_preference IN ('4g_5g_preferred', '4g_only', '3g_only', '2g_only')),
  apn_name TEXT NOT NULL CHECK (apn_name IN ('internet', 'broken')),
  apn_reset_at_reboot INTEGER NOT NULL CHECK (apn_reset_at_reboot IN (0, 1)),
  apn_mms_apn TEXT,
  apn_mmsc_url TEXT,
  apn_mms_proxy TEXT,
  apn_mms_port INTEGER,
  wifi_enabled INTEGER NOT NULL CHECK (wifi_enabled IN (0, 1)),
  wifi_connected INTEGER NOT NULL CHECK (wifi_connected IN (0, 1)),
  wifi_ssid TEXT,
  wifi_signal_strength TEXT NOT NULL CHECK (wifi_signal_strength IN ('none', 'poor', 'fair', 'good', 'excellent')),
  wifi_calling_enabled INTEGER NOT NULL CHECK (wifi_calling_enabled IN (0, 1)),
  wifi_calling_mms_over_wifi INTEGER NOT NULL CHECK (wifi_calling_mms_over_wifi IN (0, 1)),
  data_saver_mode INTEGER NOT NULL CHECK (data_saver_mode IN (0, 1)),
  vpn_enabled_setting INTEGER NOT NULL CHECK (vpn_enabled_setting IN (0, 1)),
  vpn_connected INTEGER NOT NULL CHECK (vpn_connected IN (0, 1)),
  vpn_details_set INTEGER NOT NULL CHECK (vpn_details_set IN (0, 1)),
  vpn_server_address TEXT,
  vpn_protocol TEXT,
  vpn_server_performance TEXT CHECK (vpn_server_performance IN ('unknown', 'poor', 'fair', 'good', 'excellent'))
);

-- `MockPhoneAttributes.app_statuses`: dict key → AppStatus (app_name, permissions).
CREATE TABLE user_apps (
  app_key TEXT PRIMARY KEY,
  position INTEGER NOT NULL,
  app_name TEXT NOT NULL,
  sms INTEGER NOT NULL CHECK (sms IN (0, 1)),
  storage INTEGER NOT NULL CHECK (storage IN (0, 1)),
  phone INTEGER NOT NULL CHECK (phone IN (0, 1)),
  network INTEGER NOT NULL CHECK (network IN (0, 1))
);

-- `UserSurroundings`, one row; `payment_request` → payment_* (all NULL when it is None).
CREATE TABLE user_surroundings (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  name TEXT,
  phone_number TEXT,
  is_abroad INTEGER NOT NULL CHECK (is_abroad IN (0, 1)),
  roaming_allowed INTEGER NOT NULL CHECK (roaming_allowed IN (0, 1)),
  mobile_data_usage_exceeded INTEGER NOT NULL CHECK (mobile_data_usage_exceeded IN (0, 1)),
  line_active INTEGER NOT NULL CHECK (line_active IN (0, 1)),
  payment_bill_id TEXT,
  payment_amount_due REAL,
  payment_paid INTEGER CHECK (payment_paid IN (0, 1))
);

-- `UserSurroundings.signal_strength`: network technology → signal strength where the caller is.
CREATE TABLE user_signal_strength (
  technology TEXT PRIMARY KEY CHECK (technology IN ('none', '2G', '3G', '4G', '5G')),
  position INTEGER NOT NULL,
  strength TEXT NOT NULL CHECK (strength IN ('none', 'poor', 'fair', 'good', 'excellent'))
);
