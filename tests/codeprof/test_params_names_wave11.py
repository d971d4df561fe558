"""Model sizes read from names that arrive at run time: BLOOM's decimal spelling, encoder size words, BERT
layer/width codes, and sentence-transformers classes that take the hub name."""

from __future__ import annotations

import textwrap
from pathlib import Path

from schedmate.codeprof import known
from schedmate.codeprof.static.modelsize.families import decoder_lm_params


def test_a_digit_after_the_unit_is_the_first_decimal_of_the_size() -> None:
    assert known.size_from_name("acme/widget-2b5") == 2.5e9
    assert known.size_from_name("widget-3m2-chat") == 3.2e6


def test_a_local_directory_joining_organisation_and_name_still_gives_the_size() -> None:
    hit = known.lookup_in_path("/mnt/ckpt/someorg_bloom-3b1")
    assert hit is not None and abs(hit[2] - 3.1e9) < 1e6 and hit[1] == "gpt"


def test_an_encoder_named_by_family_and_size_word_gets_the_published_size() -> None:
    assert known.lookup_model("someone/ModernBERT-large")[2] == 3.95e8  # type: ignore[index]
    assert known.lookup_model("paraphrase-multilingual-mpnet-base-v2")[2] == 1.09e8  # type: ignore[index]
    assert known.lookup_model("my-lab/xlm-roberta-base-finetuned")[2] == 2.78e8  # type: ignore[index]


def test_a_size_word_without_a_known_encoder_family_is_no_evidence() -> None:
    assert known.lookup_model("acme-widget-large") is None
    assert known.lookup_model("modernbert-base-to-large") is None  # two different words


def test_a_bert_layer_and_width_code_is_counted_as_a_bert_encoder() -> None:
    got = known.lookup_model("lab/tinyencoder_uncased_L-6_H-512_A-8")
    assert got is not None
    # BERT-medium-like: 6 layers x 512 over the BERT vocabulary, published near 29-42M for such shapes
    expected = decoder_lm_params(6, 512, heads=8, ffn=2048, vocab=30522, gated=False, tied=True,
                                 positions=512, bias=True)
    assert got[2] == expected and 2.5e7 < expected < 3.5e7


def test_bert_base_shaped_code_gives_about_110m() -> None:
    got = known.lookup_model("lab/encoder_L-12_H-768_A-12")
    assert got is not None and 1.0e8 < got[2] < 1.2e8


def test_a_sentence_transformers_class_given_a_hub_name_in_a_local_variable_names_the_model(tmp_path: Path) -> None:
    from schedmate.codeprof.analyzer import analyze_code

    (tmp_path / "train_ce.py").write_text(textwrap.dedent("""
        from sentence_transformers.cross_encoder import CrossEncoder

        def main():
            base = "someorg/ModernBERT-base"
            batch = 24
            model = CrossEncoder(base)
            model.fit(batch_size=batch, epochs=2)

        if __name__ == "__main__":
            main()
    """))
    prof = analyze_code(tmp_path, "python train_ce.py", use_llm=False)
    got = prof.facts["params"].value
    assert got is not None and abs(got - 1.49e8) < 1e6
