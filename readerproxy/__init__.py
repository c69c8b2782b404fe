"""readerproxy: main-content extraction as a library, a CLI, a JSON API and a reader proxy."""

from .api import Article, algorithms, extract
from .engine.extraction import Block, Extraction
from .engine.parse.document import Document, parse

__all__ = ["Article", "Block", "Document", "Extraction", "algorithms", "extract", "parse"]
__version__ = "0.1.0"
