"""The case studies, importable as ``studies`` (``case-studies/<name>/`` is ``studies.<name>``).

Each study folder is a package: its scripts run as ``python case-studies/<name>/<script>.py`` or
through ``gabarito study <name>``, and import each other as ``studies.<name>.<module>``. Code that
more than one study uses lives in ``gabarito``, not here.
"""
