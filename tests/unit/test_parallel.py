"""TP and PP traffic against figures worked out by hand."""

import pytest

from snippets.teaching.traffic import (
    ALLREDUCES_PER_LAYER,
    pp_boundary_bytes,
    pp_bytes_per_token,
    ring_allreduce_bytes_per_gpu,
    ring_allreduce_steps,
    tp_allreduce_message_bytes,
    tp_bytes_per_token,
    tp_messages_per_token,
)


def test_message_is_the_hidden_state() -> None:
    # Llama 3.1 405B: 16,384 x 2 bytes = 32,768; 70B: 8,192 x 2 = 16,384
    assert tp_allreduce_message_bytes(16384, 2) == 32768
    assert tp_allreduce_message_bytes(8192, 2) == 16384
    # 64 tokens in one step: 64 x 32,768 = 2,097,152
    assert tp_allreduce_message_bytes(16384, 2, tokens=64) == 2_097_152
    # 8-bit activations halve it
    assert tp_allreduce_message_bytes(16384, 1) == 16384


@pytest.mark.parametrize(("n", "steps", "fraction"), [(1, 0, 0.0), (2, 2, 1.0), (4, 6, 1.5), (8, 14, 1.75)])
def test_ring_sends_2_n_minus_1_over_n(n: int, steps: int, fraction: float) -> None:
    # 2(n-1) steps, each sending 1/n of the message: n=8 -> 14/8 = 1.75
    assert ring_allreduce_steps(n) == steps
    assert ring_allreduce_bytes_per_gpu(32768, n) == pytest.approx(fraction * 32768)


def test_ring_of_8_on_405b() -> None:
    # 1.75 x 32,768 = 57,344 bytes per GPU per all-reduce
    assert ring_allreduce_bytes_per_gpu(32768, 8) == 57344


def test_tp_bytes_per_token_405b_tp8() -> None:
    # 126 layers x 2 all-reduces x 57,344 bytes = 14,450,688 bytes
    assert ALLREDUCES_PER_LAYER == 2
    assert tp_bytes_per_token(126, 16384, 2, 8) == 14_450_688
    # 70B on TP2: 80 x 2 x (1 x 16,384) = 2,621,440 bytes
    assert tp_bytes_per_token(80, 8192, 2, 2) == 2_621_440
    # one GPU: no traffic
    assert tp_bytes_per_token(80, 8192, 2, 1) == 0
    # traffic grows with tokens in the step: 4 tokens, 4x
    assert tp_bytes_per_token(80, 8192, 2, 2, tokens=4) == 4 * 2_621_440


def test_tp_messages_per_token() -> None:
    # 126 layers x 2 all-reduces x 14 ring steps = 3,528; 80 x 2 x 2 = 320
    assert tp_messages_per_token(126, 8) == 3528
    assert tp_messages_per_token(80, 2) == 320
    assert tp_messages_per_token(80, 1) == 0


def test_pp_sends_the_hidden_state_once_per_boundary() -> None:
    assert pp_boundary_bytes(16384, 2) == 32768
    assert pp_boundary_bytes(16384, 2, tokens=3) == 3 * 32768
    # two stages: one boundary; four stages: three boundaries
    assert pp_bytes_per_token(16384, 2, 2) == 32768
    assert pp_bytes_per_token(16384, 2, 4) == 3 * 32768
    assert pp_bytes_per_token(16384, 2, 1) == 0
    # TP8 over 126 layers sends 14,450,688 / 32,768 = 441 times a PP boundary
    assert tp_bytes_per_token(126, 16384, 2, 8) / pp_bytes_per_token(16384, 2, 2) == 441


@pytest.mark.parametrize(
    "call",
    [
        lambda: tp_allreduce_message_bytes(0, 2),
        lambda: tp_allreduce_message_bytes(16384, 0),
        lambda: tp_allreduce_message_bytes(16384, 2, tokens=0),
        lambda: tp_allreduce_message_bytes(16384, 2, tokens=1.5),
        lambda: ring_allreduce_steps(0),
        lambda: ring_allreduce_bytes_per_gpu(-1, 8),
        lambda: tp_bytes_per_token(0, 16384, 2, 8),
        lambda: tp_messages_per_token(126, 0),
        lambda: pp_bytes_per_token(16384, 2, 0),
    ],
)
def test_bad_inputs_are_refused(call) -> None:
    with pytest.raises(ValueError):
        call()
