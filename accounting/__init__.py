"""dpcert accounting (placeholder; filled in below)."""
