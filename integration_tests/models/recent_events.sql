{{ config(materialized='table', event_time='event_ts') }}
{#- Events over the last three days (relative to the build), the input of orders_microbatch:
    microbatch runs one batch per day from `begin` to now, so its input must be recent. -#}
select id, timestampadd(HOUR, -id * 5, current_timestamp()) as event_ts, id * 10 as amount
from (select explode(sequence(1, 12)) as id)
