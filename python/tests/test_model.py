"""The model, tokenizer and error bindings against llama2.c's golden outputs (testdata/golden),
which no one on this project wrote."""
import json
import threading
import time

import numpy as np
import pytest

import kvcim


def load_golden(golden):
    run = json.loads((golden / "stories260K.once_upon_a_time.json").read_text())
    logits = np.load(golden / "stories260K.once_upon_a_time.logits.npy")
    return run, logits


def test_logits_match_llama2c_golden(model, golden):
    run, expected = load_golden(golden)
    n = expected.shape[0]
    got = model.logits(run["ids"][:n])
    assert isinstance(got, np.ndarray)
    assert got.dtype == np.float32
    assert got.shape == expected.shape == (n, model.config.vocab_size)
    # Agreement expected from float32 with another summation order: 1e-4 of each row's max |logit|.
    tolerance = 1e-4 * np.abs(expected).max(axis=1)
    worst = np.abs(got - expected).max(axis=1)
    assert np.all(worst <= tolerance), f"rows over tolerance: {np.nonzero(worst > tolerance)[0]}"


def test_greedy_forward_reproduces_golden_ids(model, golden):
    run, _ = load_golden(golden)
    ids = run["ids"]
    prompt = run["prompt_ids"]
    fed = [ids[0]]
    for pos in range(len(ids) - 1):
        logits = model.forward(fed[-1], pos)
        # Teacher forcing inside the prompt, then argmax with the lowest index winning ties.
        fed.append(prompt[pos + 1] if pos + 1 < len(prompt) else int(np.argmax(logits)))
    assert fed == ids


def test_tokenizer_cases(tokenizer, golden):
    cases = json.loads((golden / "tokenizer_cases.json").read_text())["cases"]["tok512.bin"]
    assert len(cases) >= 5
    for case in cases:
        assert tokenizer.encode(case["text"], bos=True, eos=False) == case["ids"], case["text"]
        # Decoding the ids gives the text back (the leading dummy space is removed after BOS).
        assert tokenizer.decode_all(case["ids"]) == case["text"]


def test_golden_text_decodes(model, tokenizer, golden):
    run, _ = load_golden(golden)
    # run.c also printed the token it picked at the last position, which it never fed.
    last = int(np.argmax(model.logits(run["ids"])[-1]))
    assert tokenizer.decode_all(run["ids"] + [last]) == run["text"]


def test_config_fields_mirror_cpp(model):
    c = model.config
    assert (c.dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size) == (64, 5, 8, 4, 512)
    assert c.head_dim() == c.dim // c.n_heads
    assert c.kv_dim() == c.head_dim() * c.n_kv_heads
    d = c.to_dict()
    assert set(d) == {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size",
                      "seq_len", "shared_classifier", "rope_theta", "rms_norm_eps", "architecture",
                      "head_dim", "qkv_bias", "o_bias", "qk_norm", "sliding_window", "rope_scaling"}
    assert kvcim.Config.from_dict(d) == c
    assert kvcim.read_checkpoint_config(kvcim.default_model_path()) == c


def test_errors_arrive_as_kvcim_error_with_cpp_message(tmp_path):
    assert issubclass(kvcim.Error, RuntimeError) and issubclass(kvcim.Error, ValueError)
    with pytest.raises(kvcim.Error) as info:
        kvcim._core._raise_error("where: field = value: expected something")
    assert str(info.value) == "where: field = value: expected something"

    missing = tmp_path / "missing.bin"
    with pytest.raises(kvcim.Error, match=str(missing)):
        kvcim.Model.load(str(missing))

    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\x01\x00\x00\x00" * 3)  # shorter than the 7-int header
    with pytest.raises(kvcim.Error, match="bad.bin"):
        kvcim.Model.load(str(bad))


def test_out_of_range_token_is_an_error_not_a_crash(model):
    with pytest.raises(kvcim.Error, match="9999"):
        model.logits([1, 9999])
    with pytest.raises(kvcim.Error):
        model.logits([])
    # The model stays usable after an error.
    assert model.logits([1, 403]).shape == (2, 512)


def test_tokenizer_ids_outside_the_vocabulary_and_bytes_that_are_not_utf8(tokenizer):
    n = tokenizer.vocab_size
    for call, name in ((tokenizer.piece, "Tokenizer.piece"), (tokenizer.score, "Tokenizer.score")):
        for bad in (-1, n):
            with pytest.raises(kvcim.Error, match=rf"^{name}: id = {bad}: outside the vocabulary of {n}$"):
                call(bad)
        call(n - 1)
    # tok512's byte pieces <0x00>..<0xFF> are ids 3..258: decode() gives a byte as it is; the
    # text joins bytes into UTF-8, a lone 0xFF byte (not UTF-8) becoming U+FFFD; decode_all
    # prints as run.c does, which drops a lone byte that is not printable.
    assert tokenizer.piece(3 + 0xFF) == b"<0xFF>"
    assert tokenizer.decode(1, 3 + 0xFF) == b"\xff"
    assert tokenizer.decode_text([1, 3 + 0xE2, 3 + 0x82, 3 + 0xAC]) == "\u20ac"
    assert tokenizer.decode_text([1, 3 + 0xFF]) == "\ufffd"
    assert tokenizer.decode_all([1, 3 + 0xFF]) == ""


def test_config_from_dict_rejects_unknown_and_bad_fields():
    d = kvcim.Model.load().config.to_dict()
    with pytest.raises(kvcim.Error, match="dimm"):
        kvcim.Config.from_dict({**d, "dimm": 3})
    with pytest.raises(kvcim.Error, match="n_heads"):
        kvcim.Config.from_dict({**d, "n_heads": "8"})


def test_logits_release_the_gil(model):
    # While one thread computes logits in C++, another Python thread must keep running.
    tokens = list(range(1, 500))
    ticks = 0
    calls = 0
    done = threading.Event()
    start = time.perf_counter()

    def work():
        nonlocal calls
        # calls until 0.3 s have passed, however fast the machine: each call is some ms long
        while calls < 10 or time.perf_counter() - start < 0.3:
            model.logits(tokens)
            calls += 1
        done.set()

    worker = threading.Thread(target=work)
    worker.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    elapsed = time.perf_counter() - start
    # Up to 1 tick per ms when the GIL is free (fewer on a loaded machine); with the GIL held
    # through each call the loop could only run between the calls: about one tick a call.
    assert elapsed >= 0.3
    assert ticks >= 3 * calls, (ticks, calls, elapsed)


def test_concurrent_threads_on_one_model_agree(model):
    tokens = [1, 403, 407, 261, 378, 432, 383]
    expected = model.logits(tokens)
    results = [None] * 4

    def work(i):
        results[i] = model.logits(tokens)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, expected)


def test_int8_weights_within_stated_kl_of_float(model, golden):
    run, _ = load_golden(golden)
    ids = run["ids"][:64]
    q = kvcim.Model.load(weights="int8")
    assert q.weights == "int8" and model.weights == "float"
    assert "int8" in repr(q)
    a = model.logits(ids).astype(np.float64)
    b = q.logits(ids).astype(np.float64)
    la = a - a.max(1, keepdims=True)
    la -= np.log(np.exp(la).sum(1, keepdims=True))
    lb = b - b.max(1, keepdims=True)
    lb -= np.log(np.exp(lb).sum(1, keepdims=True))
    kl = (np.exp(la) * (la - lb)).sum(1).mean()
    # the stated tolerance of the int8 path (as in testbench/tests/model/test_int8_model.cpp)
    assert 0 < kl <= 0.01
    with pytest.raises(kvcim.Error, match="weights"):
        kvcim.Model.load(weights="int4")
