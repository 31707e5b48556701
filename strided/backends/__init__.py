"""Device backends: each registers one kernel per primitive for its device type."""
