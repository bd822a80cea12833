"""Package layout: one installed namespace, ``backbone``, built from three repository folders.

``backbone/`` is the model layer, ``solver/`` installs as ``backbone.solver``, ``api/`` as ``backbone.api`` and
the repository's ``data/`` folder as ``backbone.data`` (the shipped scenario and basemap travel inside the
package). After ``pip install .`` only ``backbone`` sits at the top level of site-packages.
"""

from setuptools import find_packages, setup


def _mapped(folder: str, package: str) -> list[str]:
    """``package`` and its sub-packages, found in the repository folder ``folder``."""
    return [package, *(f"{package}.{name}" for name in find_packages(where=folder))]


setup(
    packages=[
        *find_packages(include=["backbone", "backbone.*"]),
        *_mapped("solver", "backbone.solver"),
        *_mapped("api", "backbone.api"),
        "backbone.data",
    ],
    package_dir={"backbone.solver": "solver", "backbone.api": "api", "backbone.data": "data"},
    package_data={
        "backbone": ["py.typed"],
        "backbone.maps": ["templates/*"],
        "backbone.data": ["**/*"],
        "backbone.api": ["migrations/**/*", "alembic.ini", "static/**/*"],
        "backbone.api.web": ["static/*"],
    },
    include_package_data=False,
)
