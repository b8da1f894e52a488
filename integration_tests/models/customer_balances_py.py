"""A Python model (session method): an incremental merge written by the same
materialization as SQL models. Its incremental runs return one more column, which
append_new_columns commits through PyIceberg before the merge."""


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        unique_key="customer_id",
        on_schema_change="append_new_columns",
    )
    balances = dbt.ref("customers").selectExpr(
        "customer_id", "cast(balance * 100 as bigint) as balance_cents"
    )
    if dbt.is_incremental:
        balances = balances.selectExpr("*", "balance_cents >= 0 as in_credit")
    return balances
