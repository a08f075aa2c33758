"""The classic test collections, read from their original files as distributed.

Five collections are known (:data:`COLLECTIONS`): ``cranfield``, ``cisi``,
``medline``, ``npl`` and ``adi``. :func:`load_collection` fetches the files
named in ``data/datasets.json`` (from the upstream URL or a local mirror,
sha256-verified, see :mod:`gabarito.inputs.datasets`) and reads the tarballs in
place, without extracting them.

What becomes :attr:`Document.text` and :attr:`EvalQuery.query`:

* Glasgow ``.I/.T/.A/.B/.W`` files (Cranfield, CISI, MEDLINE, ADI): a
  document's text is its title (``.T``) and its abstract (``.W``), separated by
  a blank line; :attr:`Document.title` is the ``.T`` alone. Authors (``.A``),
  bibliographic data (``.B``), keywords (``.K``), categories (``.C``) and
  CISI's cross-references (``.X``) are read and left out. MEDLINE has only
  ``.W``. Lines are kept as written (trailing blanks and carriage returns
  removed). A query's text is its ``.W``, preceded by its ``.T`` when it has
  one (CISI queries 58-112 are paper abstracts with a title), with runs of
  blanks and line breaks turned into single spaces.
* NPL (TREC form by the Terrier team): the text between ``</DOCNO>`` and
  ``</DOC>`` (there is no title); a query's text is its ``<title>``.

Relevance: ``Collection.qrels`` is ``{query id: {document id: grade}}`` with
integer grades, 0 meaning judged not relevant (only Cranfield has such rows).
A query's :attr:`EvalQuery.relevant_ids` are the documents with grade >= 1 in
file order; ``extra["relevance"]`` holds their grades. Queries with no
relevant document are kept and their ids are in :attr:`Collection.unjudged`.

Cranfield needs two corrections that are easy to miss:

* ``cranqrel`` numbers the queries 1..225 by their **position** in
  ``cran.qry``, whose own ``.I`` numbers run 001..365 with gaps. Query ids
  here are the positions; the ``.I`` number is in ``extra["file_id"]``.
* ``cranqrel``'s codes run the wrong way for graded measures (1 = complete
  answer ... 4 = minimum interest, ``cranqrel.readme``) and include -1;
  :data:`CRANFIELD_GRADES` maps them.

Any malformed record raises a one-line :class:`GabaritoError` naming the file
(``tarball:member`` for a file inside a tarball) and the line.
"""

from gabarito.inputs.collections.collection import CRANFIELD_GRADES, Collection, GradeMap
from gabarito.inputs.collections.glasgow import GlasgowRecord, parse_glasgow
from gabarito.inputs.collections.loaders import COLLECTIONS, load_collection
from gabarito.inputs.collections.qrels import parse_qrels
from gabarito.inputs.collections.trec import parse_trec_documents, parse_trec_topics

__all__ = [
    "COLLECTIONS",
    "CRANFIELD_GRADES",
    "Collection",
    "GlasgowRecord",
    "GradeMap",
    "load_collection",
    "parse_glasgow",
    "parse_qrels",
    "parse_trec_documents",
    "parse_trec_topics",
]
