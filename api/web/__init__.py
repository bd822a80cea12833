"""The planner's browser workspace: a single-page app served at ``/`` that talks only to the public REST API.

Its sources live in the repository's ``web/`` folder (TypeScript and MapLibre GL JS, bundled by esbuild from a
lockfile, see docs/workspace.md); the bundle ships here, in ``static/``, so ``pip install .`` serves the whole UI
without Node.js. :func:`install_workspace` adds its routes to the app.
"""

from backbone.api.web.pages import WORKSPACE_CSP, install_workspace, static_dir, workspace_csp

__all__ = ["WORKSPACE_CSP", "install_workspace", "static_dir", "workspace_csp"]
