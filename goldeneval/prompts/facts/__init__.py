"""Fact-aware reference grading (issue 42): the facts of the reference decide.

The rules are written once, in prose, in the answers guide (``docs/guide/answers.md``,
"Reference grading: the facts decide"); each module here implements one idea of them, and the
guide names the module for each.  From the bottom up:

* :mod:`.vocabulary`: the words the rules read (number words, units and their dimensions,
  currencies, months, weekdays, opening yes and no words);
* :mod:`.model`: a :class:`~.model.Fact`, its kind and the key it compares on;
* :mod:`.text`: how a text is prepared before facts are read (citation markers, ``P+R``, an
  amount "in 24 hours"), its notes and sentences;
* :mod:`.values`: numbers with units and currencies, times of day, dates, years, frequencies;
* :mod:`.equality`: when two values are equal (units converted, currencies kept apart);
* :mod:`.entities`: names, codes, weekdays, e-mail addresses;
* :mod:`.polarity`: yes/no, negation and the clauses that say no;
* :mod:`.hedges`: an answer that offers another value or name beside the reference's;
* :mod:`.roles`: two facts stated the other way round ("B reports to A" for "A reports to B");
* :mod:`.extraction`: all the facts of a text;
* :mod:`.grading`: the decision, :func:`~.grading.grade_reference`, and the grader's version;
* :mod:`.support`: faithfulness without a judge, :func:`~.support.unsupported_facts`.

Nothing is re-exported here: a reader finds a name where it is defined.
"""
