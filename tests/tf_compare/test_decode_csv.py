"""tl.io.decode_csv: the same records parsed by TensorFlow and trainlib (values, dtypes, errors)."""
import pytest

from .compare import check, tf, tl  # noqa: F401 -- tf: skips this module without TensorFlow

CASES = {
    "basic": lambda lib: lib.io.decode_csv(["1,2.5,a", '3,,"b,c"'], [[0], [1.0], [""]]),
    "required": lambda lib: lib.io.decode_csv(["1,2.5,a", ",,"],
                                              [[0], [1.0], lib.constant([], lib.string)]),
    "too_few": lambda lib: lib.io.decode_csv(["1,2"], [[0], [1.0], [""]]),
    "bad_int": lambda lib: lib.io.decode_csv(["x,2"], [[0], [1.0]]),
    "spaces": lambda lib: lib.io.decode_csv([" 1 , 2 "], [[0], [1.0]]),
    "scalar_na_delim": lambda lib: lib.io.decode_csv(
        "1;NA;3", [[0], [0.0], [lib.constant(0, lib.int64)]], field_delim=";", na_value="NA"),
    "select_cols": lambda lib: lib.io.decode_csv(["1,2,3,4"], [[0], [0]], select_cols=[1, 3]),
    "matrix": lambda lib: lib.io.decode_csv([["1,2"], ["3,4"]], [[0], [0.0]]),
    "escaped_quote": lambda lib: lib.io.decode_csv(['"a""b",c'], [[""], [""]]),
    "no_quote_delim": lambda lib: lib.io.decode_csv(['"a""b",c'], [[""], [""]],
                                                    use_quote_delim=False),
    "hex_int": lambda lib: lib.io.decode_csv(["1e3,0x10"], [[0.0], [0]]),
    "float_in_int": lambda lib: lib.io.decode_csv(["1.5,3"], [[0], [0.0]]),
    "int32_overflow": lambda lib: lib.io.decode_csv(["2147483648"], [[0]]),
    "float64": lambda lib: lib.io.decode_csv(["1.5"], [[lib.constant(0.0, lib.float64)]]),
    "inf_nan": lambda lib: lib.io.decode_csv(["inf,nan,-Inf"], [[0.0], [0.0], [0.0]]),
    "bool_default": lambda lib: lib.io.decode_csv(["a"], [[True]]),
    "open_quote": lambda lib: lib.io.decode_csv(['1,"x'], [[0], [""]]),
    "signs": lambda lib: lib.io.decode_csv(["+5,-3"], [[0], [0]]),
    "trailing_empty": lambda lib: lib.io.decode_csv(["1,"], [[0], ["z"]]),
    "int64_big": lambda lib: lib.io.decode_csv(["9000000000"], [[lib.constant(0, lib.int64)]]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_decode_csv(name):
    check(CASES[name])


def test_decode_csv_traced_in_dataset_map():
    def program(lib):
        ds = lib.data.Dataset.from_tensor_slices(["1,0.5,x", "2,1.5,y"]).map(
            lambda line: tuple(lib.io.decode_csv(line, [[0], [0.0], [""]])))
        return [list(e) for e in ds.batch(2)]
    check(program)
