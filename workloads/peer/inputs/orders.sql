-- A small order database: create, fill with a recursive CTE, index, update in a transaction, aggregate.
PRAGMA page_size = 4096;
CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, region TEXT NOT NULL);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER REFERENCES customer(id), amount REAL, item TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
INSERT INTO customer SELECT i, 'customer-' || i, char(65 + i % 5) FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
INSERT INTO orders SELECT i, 1 + (i * 7919) % 200, ((i * 104729) % 10000) / 100.0, 'item-' || (i % 37) FROM n;
CREATE INDEX orders_by_customer ON orders(customer);
BEGIN;
UPDATE orders SET amount = amount * 1.1 WHERE item = 'item-3';
DELETE FROM orders WHERE amount < 1.0;
COMMIT;
SELECT region, count(*), printf('%.2f', sum(amount)) FROM orders JOIN customer ON customer.id = orders.customer
GROUP BY region ORDER BY region;
SELECT item, count(*) AS n FROM orders GROUP BY item ORDER BY n DESC, item LIMIT 5;
SELECT name FROM customer WHERE id IN (SELECT customer FROM orders GROUP BY customer HAVING sum(amount) > 1500)
ORDER BY name LIMIT 10;
PRAGMA integrity_check;
