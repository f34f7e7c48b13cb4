"""rebuild_pass.batches: the pieces of one Spark pass stay in order and within the base-partition limit."""

from hmsproxy.jobs.rebuild_index import Piece
from hmsproxy.jobs.rebuild_pass import batches
from hmsproxy.jobs.tables import Target


def piece(name: str, bases: int) -> Piece:
    return Piece(name, (name,), [Target("db", "t", f"{name}/{i}", f"/t/{name}/{i}", (name, str(i))) for i in range(bases)])


def test_pieces_are_cut_into_runs_of_at_most_the_limit_in_order():
    pieces = [piece(f"p{i}", 1) for i in range(7)]
    runs = list(batches(pieces, limit=3))
    assert [[p.name for p in run] for run in runs] == [["p0", "p1", "p2"], ["p3", "p4", "p5"], ["p6"]]


def test_a_piece_bigger_than_the_limit_is_a_run_of_its_own():
    pieces = [piece("a", 1), piece("big", 5), piece("b", 2)]
    assert [[p.name for p in run] for run in batches(pieces, limit=3)] == [["a"], ["big"], ["b"]]


def test_no_pieces_no_runs():
    assert list(batches([], limit=3)) == []
