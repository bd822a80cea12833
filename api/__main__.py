from api.cli.main import run

run()
