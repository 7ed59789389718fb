-- tau2-bench airline (FlightDB) as tables. `position` keeps the order of a JSON dict's keys or a
-- list's items; `absent_fields` lists optional fields a source record left out (JSON array).
-- Money: payment amounts and prices are integers (dollars); gift-card and certificate amounts
-- are REAL because tau2 types them float.

CREATE TABLE flights (
  flight_number TEXT PRIMARY KEY,
  position INTEGER NOT NULL,
  origin TEXT NOT NULL,
  destination TEXT NOT NULL,
  scheduled_departure_time_est TEXT NOT NULL,
  scheduled_arrival_time_est TEXT NOT NULL
);
CREATE INDEX flights_by_origin ON flights (origin, destination);

-- One row per flight and date (`Flight.dates`). Which time columns are set depends on status:
-- landed: actual_departure + actual_arrival; flying: actual_departure + estimated_arrival;
-- delayed / on time: estimated_departure + estimated_arrival; available and cancelled: none.
CREATE TABLE flight_dates (
  flight_number TEXT NOT NULL REFERENCES flights (flight_number),
  date TEXT NOT NULL,
  position INTEGER NOT NULL,
  status TEXT NOT NULL,
  actual_departure_time_est TEXT,
  actual_arrival_time_est TEXT,
  estimated_departure_time_est TEXT,
  estimated_arrival_time_est TEXT,
  PRIMARY KEY (flight_number, date)
);
CREATE INDEX flight_dates_by_date ON flight_dates (date, status);

-- `available_seats` of an available flight date, one row per cabin.
CREATE TABLE flight_date_seats (
  flight_number TEXT NOT NULL,
  date TEXT NOT NULL,
  cabin TEXT NOT NULL,
  position INTEGER NOT NULL,
  available_seats INTEGER NOT NULL,
  PRIMARY KEY (flight_number, date, cabin)
);

-- `prices` of an available flight date, one row per cabin (dollars).
CREATE TABLE flight_date_prices (
  flight_number TEXT NOT NULL,
  date TEXT NOT NULL,
  cabin TEXT NOT NULL,
  position INTEGER NOT NULL,
  price INTEGER NOT NULL,
  PRIMARY KEY (flight_number, date, cabin)
);

CREATE TABLE users (
  user_id TEXT PRIMARY KEY,
  position INTEGER NOT NULL,
  first_name TEXT NOT NULL,
  last_name TEXT NOT NULL,
  address1 TEXT NOT NULL,
  address2 TEXT,
  city TEXT NOT NULL,
  country TEXT NOT NULL,
  state TEXT NOT NULL,
  zip TEXT NOT NULL,
  email TEXT NOT NULL,
  dob TEXT NOT NULL,
  membership TEXT NOT NULL,
  absent_fields TEXT
);

-- `User.payment_methods`, keyed by the method id. credit_card: brand + last_four;
-- gift_card and certificate: amount (float).
CREATE TABLE user_payment_methods (
  user_id TEXT NOT NULL REFERENCES users (user_id),
  payment_method_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  source TEXT NOT NULL,
  brand TEXT,
  last_four TEXT,
  amount REAL,
  PRIMARY KEY (user_id, payment_method_id)
);

CREATE TABLE user_saved_passengers (
  user_id TEXT NOT NULL REFERENCES users (user_id),
  position INTEGER NOT NULL,
  first_name TEXT NOT NULL,
  last_name TEXT NOT NULL,
  dob TEXT NOT NULL,
  PRIMARY KEY (user_id, position)
);

-- `User.reservations`: the reservation ids listed on the user, in order.
CREATE TABLE user_reservation_ids (
  user_id TEXT NOT NULL REFERENCES users (user_id),
  position INTEGER NOT NULL,
  reservation_id TEXT NOT NULL,
  PRIMARY KEY (user_id, position)
);

CREATE TABLE reservations (
  reservation_id TEXT PRIMARY KEY,
  position INTEGER NOT NULL,
  user_id TEXT NOT NULL,
  origin TEXT NOT NULL,
  destination TEXT NOT NULL,
  flight_type TEXT NOT NULL,
  cabin TEXT NOT NULL,
  created_at TEXT NOT NULL,
  total_baggages INTEGER NOT NULL,
  nonfree_baggages INTEGER NOT NULL,
  insurance TEXT NOT NULL,
  status TEXT,
  absent_fields TEXT
);
-- A booking numbers its reservation after the last one (max(position) + 1): without an index
-- that is a scan of every reservation (~80 µs in sql.js).
CREATE INDEX reservations_by_position ON reservations (position);
-- The compensation rules list a user's reservations by owner (a scan of every reservation without it).
CREATE INDEX reservations_by_user ON reservations (user_id);

CREATE TABLE reservation_flights (
  reservation_id TEXT NOT NULL REFERENCES reservations (reservation_id),
  position INTEGER NOT NULL,
  flight_number TEXT NOT NULL,
  origin TEXT NOT NULL,
  destination TEXT NOT NULL,
  date TEXT NOT NULL,
  price INTEGER NOT NULL,
  PRIMARY KEY (reservation_id, position)
);

CREATE TABLE reservation_passengers (
  reservation_id TEXT NOT NULL REFERENCES reservations (reservation_id),
  position INTEGER NOT NULL,
  first_name TEXT NOT NULL,
  last_name TEXT NOT NULL,
  dob TEXT NOT NULL,
  PRIMARY KEY (reservation_id, position)
);

-- `Reservation.payment_history`; refunds are negative amounts (dollars).
CREATE TABLE reservation_payments (
  reservation_id TEXT NOT NULL REFERENCES reservations (reservation_id),
  position INTEGER NOT NULL,
  payment_id TEXT NOT NULL,
  amount INTEGER NOT NULL,
  PRIMARY KEY (reservation_id, position)
);
