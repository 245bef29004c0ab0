"""Scraping a broker's Prometheus endpoint over HTTP, parsed with prometheus_client's parser."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

DASHBOARD = Path(__file__).resolve().parents[3] / "docs" / "grafana-dashboard.json"


def scrape(port: int, host: str = "127.0.0.1") -> dict[str, float]:
    """Every sample of http://host:port/metrics: ``'name{k="v",...}' -> value`` (labels
    sorted by name)."""
    with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=30) as reply:
        text = reply.read().decode()
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items()))
            out[f"{s.name}{{{labels}}}" if labels else s.name] = s.value
    return out


def names(samples: dict[str, float]) -> set[str]:
    return {key.split("{", 1)[0] for key in samples}


def dashboard_metric_names() -> set[str]:
    """The metric names the Grafana dashboard's queries use."""
    dashboard = json.loads(DASHBOARD.read_text())
    exprs: list[str] = []
    for panel in dashboard["panels"]:
        exprs += [t["expr"] for t in panel.get("targets", [])]
    for variable in dashboard["templating"]["list"]:
        exprs.append(variable["definition"])
    found = set()
    for expr in exprs:
        found |= set(re.findall(r"\b(kafka_[a-z_]+)\b", expr))
    return found
