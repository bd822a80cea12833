"""Package discovery: code packages plus the repository's ``data/`` folder installed as
``backbone/data`` (so the shipped scenario and basemap travel inside the installed package)."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["backbone", "backbone.*", "solver", "solver.*", "api", "api.*"]),
              "backbone.data"],
    package_dir={"backbone.data": "data"},
    package_data={
        "backbone": ["py.typed"],
        "backbone.data": ["**/*"],
        "api": ["migrations/**/*", "alembic.ini", "static/**/*"],
    },
    include_package_data=False,
)
