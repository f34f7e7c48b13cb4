"""Dependent tables (../shared/design/hive-dependent-tables.md, "Final Proposal"): published partitions
that depend on partitions of other tables, served to clients as views the proxy writes."""
