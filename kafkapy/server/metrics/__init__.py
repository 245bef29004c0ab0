"""The broker's metrics, named as the Prometheus JMX exporter names Kafka's MBeans.

- :mod:`.broker_topic_stats`: BrokerTopicMetrics counters (messages/bytes in and out,
  failed and total produce/fetch requests), per topic and for all topics;
- :mod:`.request_metrics`: RequestMetrics (requests per API and version; total, queue,
  local, remote, response-queue and response-send time per API) and the timers they share
  with LogFlushStats;
- :mod:`.broker_metrics`: ``BrokerMetrics``, the one registry a broker owns: the counters
  above, the ISR change counters, the event loop's idle time, and the gauges read from the
  broker's state at scrape time; ``snapshot()`` gives every sample;
- :mod:`.metrics_server`: the Prometheus endpoint (``kafkapy.metrics.port``).

Layering: this package imports nothing of the broker (tests/test_layering.py): the broker's
components call into it (a counter bump per batch or per request, never per record) and it
reads the broker's state only through the object ``BrokerMetrics`` is given, duck-typed.
"""

from kafkapy.server.metrics.broker_metrics import BrokerMetrics, Family, Sample
from kafkapy.server.metrics.broker_topic_stats import BrokerTopicStats
from kafkapy.server.metrics.request_metrics import RequestMetrics, Timer

__all__ = ["BrokerMetrics", "BrokerTopicStats", "Family", "RequestMetrics", "Sample", "Timer"]
