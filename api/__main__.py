from backbone.api.cli.main import run

run()
