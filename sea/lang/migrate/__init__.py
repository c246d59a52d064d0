"""Rewrite a SAIVerse-format playbook into explicit SEA form (``sea migrate``).

SEA runs SAIVerse playbooks as they are: :mod:`sea.lang.saiverse` states the rules SAIVerse's
runtime applied without the playbook saying so. A migration writes those rules into the
playbook, where SEA's language can say them, so that the file no longer depends on them:

* a callee's implicit arguments (:data:`~sea.lang.saiverse.IMPLICIT_ARGUMENTS`) become
  explicit ``args`` (``"input": "{input}"``) on ``subplay`` nodes whose callee declares the
  parameter and on every ``exec`` node;
* ``"executed_playbooks_init": true`` in a ``set`` node becomes the assignment it stood for,
  ``"executed_playbooks": []``;
* the boolean case keys ``"True"``/``"False"`` become ``"true"``/``"false"`` (unless the value
  compared is declared a string);
* a field SAIVerse silently dropped and whose meaning is plain is renamed to the SEA field
  (:data:`~sea.lang.saiverse.RENAMED_FIELDS`, and the ``did you mean`` mistakes each node
  type declares, e.g. ``tools`` → ``available_tools``);
* a Python type name in a ``response_schema`` or a parameter's type becomes the JSON Schema
  name (``int`` → ``integer``);
* the top-level fields SAIVerse dropped and SEA has no use for (``version``, ``model``,
  ``max_iterations``, ``metadata``) are removed, and so is a ``next`` that
  ``conditional_next`` overrides; a call's legacy ``input_template`` becomes the ``input``
  argument it stood for, and a parameter's legacy ``source`` the argument each ``subplay``
  caller passes (``"topic": "{plan.topic}"`` for ``parent.plan.topic``), then is removed;
* an ``exec`` node's ``"action": null`` is removed; an ``exec`` node that runs playbooks by
  a name its playbook spells gets them as ``allowed_playbooks`` (:mod:`sea.lang.exec_targets`);
* an ``output_schema`` key nothing defines is removed (SAIVerse copied nothing back for it;
  SEA's own check says so, :data:`~sea.lang.codes.OUTPUT_NEVER_DEFINED`).

The variables SAIVerse's runtime provides and SEA's language has no declaration for stay as
they are (:data:`LEFT_IMPLICIT`); SEA knows them from :mod:`sea.lang.saiverse`.

The file is edited in place (:class:`~sea.lang.jsonedit.JsonTextEditor`): only the changed
spans differ, the author's layout, key order and non-ASCII text stay. Migrating a migrated
file changes nothing.
"""


from sea.lang.migrate.document import Migration, migrate_text
from sea.lang.migrate.rules import LEFT_IMPLICIT, Change, hinted_renames

__all__ = ["LEFT_IMPLICIT", "Change", "Migration", "hinted_renames", "migrate_text"]
