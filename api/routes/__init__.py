"""API routers: health/metrics, scenarios (+ maps), jobs, admin (tokens, audit)."""
