{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='event_ts',
          begin=(modules.datetime.date.today() - modules.datetime.timedelta(days=3)).isoformat(),
          batch_size='day', lookback=1) }}
{#- microbatch: each day's batch replaces exactly that day's rows in one commit. -#}
select id, event_ts, amount from {{ ref('recent_events') }}
