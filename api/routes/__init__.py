"""API routers: health/metrics, scenarios (+ maps), jobs, compare, admin (tokens, audit), identity (whoami, basemap)."""
