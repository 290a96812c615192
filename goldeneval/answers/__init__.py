"""Retrieval-augmented answers: both kinds composed, a golden question set through a retriever and
a model.  Above both kinds, so that neither imports the other."""
