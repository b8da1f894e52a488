{{ config(materialized='table', event_time='event_ts') }}
{#- Events over the last three days (relative to the build's day), the input of
    orders_microbatch: microbatch runs one batch per day from `begin` to now, so its input
    must be recent. Counted from midnight, not from now: two builds of one day give every
    event the same time, where an event 5 hours before now could move to the next day
    between two builds, out of the one day's lookback, and be in the model twice. -#}
select id, timestampadd(HOUR, 5 - id * 5, cast(current_date() as timestamp)) as event_ts,
       id * 10 as amount
from (select explode(sequence(1, 12)) as id)
