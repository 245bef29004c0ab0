"""The coordinators: consumer groups and their committed offsets (``group``), producer ids and
transactions (``transaction``). They keep their state in internal topics and reach the broker
only through the port in ``partition_port`` (never ``kafkapy.server``), which the broker
implements and a test implements in memory."""
