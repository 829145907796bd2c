"""The HTML report without a browser (the browser test is testbench/cli/html_report.sh): every
section is there, model text is escaped, each inline SVG is well-formed XML, every data-key number
is the report's own, a quantity not computed shows as null, nothing is fetched from elsewhere, and
errors are kvcim.Error."""
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

import kvcim

NASTY = "<script>alert('x')</script> & \"quoted\" </pre><b>bold</b>"


@pytest.fixture(scope="module")
def report():
    return kvcim.run(steps=8, eval_tokens=300)


@pytest.fixture(scope="module")
def plain():  # no evaluation: perplexity not computed
    return kvcim.run(steps=6, eval_text_path="")


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.keys, self.ids, self.tags = [], set(), []
        self.text = {}
        self._in = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if "data-key" in a:
            self.keys.append((a["data-key"], a["data-value"]))
        if "id" in a:
            self.ids.add(a["id"])
            if a["id"].startswith("text-"):
                self._in = a["id"]
                self.text[self._in] = ""

    def handle_endtag(self, tag):
        if tag == "pre":
            self._in = None

    def handle_data(self, data):
        if self._in:
            self.text[self._in] += data


def parse(html):
    p = Page()
    p.feed(html)
    return p


def lookup(d, key):
    for part in key.split("."):
        d = d[int(part)] if isinstance(d, list) else d[part]
    return d


def test_every_section_and_chart(report):
    html = report.to_html()
    p = parse(html)
    for section in ("summary", "texts", "energy", "accuracy", "macro-map", "kv", "conditions",
                    "text-cim", "text-reference"):
        assert section in p.ids, section
    assert html.startswith("<!DOCTYPE html>")
    svgs = re.findall(r"<svg\b.*?</svg>", html, flags=re.S)
    # 3 energy, 2 per step, intervals (sampled, the text's), macro map, KV occupancy
    assert len(svgs) == 9
    assert "Human-written text" in html
    for svg in svgs:
        ET.fromstring(svg)  # well-formed XML
    # the macro map: one cell per macro of the chip
    assert html.count('class="macro ') == len(report.mapping["macro_map"]["role"])


def test_every_keyed_number_is_the_reports(report):
    p = parse(report.to_html())
    d = report.to_dict()
    assert len(p.keys) > 100
    for key, value in p.keys:
        assert float(value) == lookup(d, key), key
    keys = {k for k, _ in p.keys}
    for key in ("energy.cim.per_token_pj", "energy.conventional.breakdown.weight_sram",
                "energy.cim.by_op.ffn_w1", "energy.conventional.by_layer.4", "steps.kl.7",
                "steps.kv_occupancy.0", "accuracy.evaluation.kl_mean.ci_high",
                "accuracy.perplexity.reference", "mapping.macros_used", "options.top_p"):
        assert key in keys, key


def test_conditions_lines_are_shown(report):
    html = report.to_html()
    assert "chip area" in html and "both sides at" in html
    assert report["versions"]["kvcim"] in html


def test_model_text_is_escaped(plain):
    d = plain.to_dict()
    d["text"]["cim"] = NASTY
    d["text"]["reference"] = "a\x01b"
    html = kvcim.Report(d).to_html()
    assert "<script>" not in html and "<b>bold" not in html
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quoted&quot;" in html
    p = parse(html)
    assert p.text["text-cim"] == NASTY  # the browser shows exactly the model's text
    assert p.text["text-reference"] == "a\ufffdb"  # control characters are not XML
    assert "script" not in p.tags


def test_not_computed_is_null_not_zero(plain):
    html = plain.to_html()
    p = parse(html)
    values = dict(p.keys)
    assert values["accuracy.perplexity.cim"] == "null"
    assert values["accuracy.perplexity.reference"] == "null"
    assert "no-evaluation" in p.ids and "not computed" in html


def test_self_contained(report):
    html = report.to_html()
    assert not re.search(r"<script|<link|<img|@import|url\(|https?://(?!www\.w3\.org/2000/svg)",
                         html)


def test_write_html_and_errors(plain, tmp_path):
    out = plain.write_html(tmp_path / "r.html")
    assert open(out, encoding="utf-8").read() == plain.to_html()
    with pytest.raises(kvcim.Error, match="/nonexistent/dir/r.html"):
        plain.write_html("/nonexistent/dir/r.html")
    d = plain.to_dict()
    d["schema_version"] = 2
    with pytest.raises(kvcim.Error, match="schema_version"):
        kvcim.Report(d).to_html()
    del d["mapping"]
    d["schema_version"] = 1
    with pytest.raises(kvcim.Error, match="mapping"):
        kvcim.Report(d).to_html()
