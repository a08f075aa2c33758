"""Turn a jupytext percent script into a clean notebook (no outputs, python3 kernel).

    python scripts/nb_from_py.py source.py notebooks/page.ipynb
"""

import sys

import jupytext
import nbformat

src, dst = sys.argv[1], sys.argv[2]
nb = jupytext.read(src)
nb.metadata = {
    "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
    "language_info": {"name": "python"},
}
for cell in nb.cells:
    cell.metadata = {}
    if cell.cell_type == "code":
        cell.outputs, cell.execution_count = [], None
nbformat.write(nb, dst)
