"""Load drivers: one adapter per load tool behind one interface, plus kvperf's own seeding."""
