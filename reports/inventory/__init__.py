"""``lochkit inventory``: Parquet tables describing one repository, read through the Persist contract
only (objects, references, commits and the links between them). The format is documented in
``docs/reports.md`` and versioned by :data:`INVENTORY_SCHEMA_VERSION`."""

from reports.inventory.format import INVENTORY_JSON, INVENTORY_SCHEMA_VERSION, TABLES
from reports.inventory.writer import InventorySummary, write_inventory

__all__ = ["INVENTORY_JSON", "INVENTORY_SCHEMA_VERSION", "TABLES", "InventorySummary", "write_inventory"]
