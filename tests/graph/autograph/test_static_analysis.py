"""static_analysis.annotate: liveness, state, definedness and dtype recipes of each if/while/for."""
import textwrap

import gast
import pytest

from trainlib.graph.autograph import static_analysis


def _annotated(src):
    """The statements of the one function in `src`, annotated, by kind in source order."""
    fn = gast.parse(textwrap.dedent(src)).body[0]
    static_analysis.annotate(fn)
    found = {}
    for n in gast.walk(fn):
        if isinstance(n, (gast.If, gast.While, gast.For)):
            found.setdefault(type(n).__name__, []).append(n)
    for nodes in found.values():
        nodes.sort(key=lambda n: n.lineno)
    return found


def test_if_state_is_what_it_binds_and_is_read_later():
    (node,) = _annotated("""
        def f(x):
            y = x
            if x > 0:
                t = x * 3      # a temporary: not read after the if
                y = t + 1
                z = 2          # never read
            return y
        """)["If"]
    assert node.state == {"y"} and node.outputs == {"y"}
    assert "y" in node.live_out and "t" not in node.live_out and "z" not in node.live_out
    assert node.defined_before == ({"x", "y"}, {"x", "y"})


def test_a_variable_read_in_a_branch_but_not_after_is_input_only():
    (node,) = _annotated("""
        def f(x, y):
            if x > 0:
                y = y + 1
                x = y * 2
            return x
        """)["If"]
    assert node.state == {"x", "y"} and node.outputs == {"x"}


def test_loop_state_includes_what_the_next_iteration_reads():
    loops = _annotated("""
        def f(n):
            s = 0
            prev = 0
            i = 0
            while i < n:
                tmp = prev + i   # read the value the last iteration left
                prev = i
                s += tmp
                i += 1
            return s
        """)
    (loop,) = loops["While"]
    assert loop.state == {"i", "prev", "s"}  # tmp is bound before every read: a temporary
    assert {"i", "n", "prev", "s"} <= loop.live_in and loop.live_out == {"s"}


def test_for_target_is_state_only_when_read_after_the_loop():
    loops = _annotated("""
        def f(xs, ys):
            s = 0
            for x in xs:
                s += x
            for y in ys:
                pass
            return s + y
        """)["For"]
    assert loops[0].state == {"s"}
    assert loops[1].state == {"y"}


@pytest.mark.parametrize("getter", ["def get():\n                return k", "get = lambda: k"])
def test_reads_in_nested_functions_keep_variables_live(getter):
    (loop,) = _annotated(f"""
        def f(n):
            k = 1
            {getter}
            for i in range(n):
                k = i        # read by get() whenever it is called: live
            return get()
        """)["For"]
    assert loop.state == {"k"}


def test_definedness_inside_bodies_excludes_the_bodys_own_temporaries():
    found = _annotated("""
        def f(n):
            t = 5
            for i in range(n):
                if i > 0:
                    t = 1
                else:
                    t = 2
                s = t
            return n
        """)
    (loop,), (inner,) = found["For"], found["If"]
    assert loop.state == set()            # t and s are temporaries of the loop body
    possible, definite = inner.defined_before
    assert "t" not in possible and "i" in definite  # the body's t is its own, unbound


@pytest.mark.parametrize("body, recipes", [
    ("s += x", {"s": (("s", "x"), False)}),
    ("s = s * 2 + 1.5", {"s": (("s",), True)}),
    ("a, b = b, a + b", {"a": (("b",), False), "b": (("a", "b"), False)}),
    ("s = s / 2", {}),                      # `/` turns ints into floats: no recipe
    ("s = tl.cast(s, tl.float32)", {}),     # a call: no recipe
])
def test_dtype_recipes_of_loop_variables(body, recipes):
    (loop,) = _annotated(f"""
        def f(xs, w):
            s = a = b = 0
            for x in xs:
                {body}
            return s, a, b
        """)["For"]
    got, outer, targets = loop.kinds
    assert {name: (deps, uses_float) for name, deps, uses_float in got} == recipes
    assert targets == ("x",) and outer == ()


def test_recipe_names_bound_outside_the_loop_are_outer():
    (loop,) = _annotated("""
        def f(n, w):
            s = 0
            i = 0
            while i < n:
                s = s + w * i
                i += 1
            return s
        """)["While"]
    recipes, outer, targets = loop.kinds
    assert outer == ("w",) and targets == ()
    assert ("s", ("i", "s", "w"), False) in recipes and ("i", ("i",), False) in recipes
