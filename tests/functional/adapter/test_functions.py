"""dbt-tests-adapter's function-node classes that check how an adapter without Python
UDFs or table functions refuses them: a Python function, one without `runtime_version`,
one without `entry_point`, and a SQL function of `type: table` each fail their node with
dbt's own message. No adaptation needed. The classes that create functions are in
not_applicable.py with their reason."""

from dbt.tests.adapter.functions.test_udfs import (
    ErrorForUnsupportedType,
    PythonUDFEntryPointRequired,
    PythonUDFNotSupported,
    PythonUDFRuntimeVersionRequired,
)


class TestPythonUDFNotSupported(PythonUDFNotSupported):
    pass


class TestPythonUDFRuntimeVersionRequired(PythonUDFRuntimeVersionRequired):
    pass


class TestPythonUDFEntryPointRequired(PythonUDFEntryPointRequired):
    pass


class TestErrorForUnsupportedType(ErrorForUnsupportedType):
    pass
