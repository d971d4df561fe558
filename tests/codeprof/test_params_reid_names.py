"""Person re-identification backbone names in the well-known table (OSNet widths, `<backbone>_fc<dim>`)."""

from __future__ import annotations

from schedmate.codeprof import known


def test_osnet_width_multipliers_map_to_their_published_sizes() -> None:
    assert known.lookup_model("osnet_x1_0") == ("osnet_x1_0", "cnn", 2.2e6)
    assert known.lookup_model("osnet_ain_x1_0") == ("osnet_x1_0", "cnn", 2.2e6)
    assert known.lookup_model("osnet_x0_25") == ("osnet_x0_25", "cnn", 0.2e6)


def test_a_resnet50_with_a_reduction_layer_is_not_read_as_another_model() -> None:
    got = known.lookup_model("resnet50_fc512")
    assert got is not None and got[0] == "resnet50_fc512" and 23e6 < got[2] < 26e6
