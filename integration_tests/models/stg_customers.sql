select customer_id, name, signup_date, balance from {{ ref('customers') }}
