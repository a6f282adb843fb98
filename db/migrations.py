"""Schema of a benchwright project, as sqlite-utils migrations (one transaction each).

Applied when a store opens; a project made by an older version upgrades in place with nothing lost.
Every table is documented in docs/store.md. Append-only tables refuse UPDATE and DELETE by trigger.
"""

from __future__ import annotations

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

MIGRATION_SET = "benchwright"
migrations = Migrations(MIGRATION_SET)


def _append_only(db: Database, table: str) -> None:
    for op in ("UPDATE", "DELETE"):
        db.execute(
            f"""CREATE TRIGGER IF NOT EXISTS {table}_no_{op.lower()} BEFORE {op} ON {table}
            BEGIN SELECT RAISE(ABORT, '{table} is append-only: add a new row instead'); END"""
        )


@migrations(name="m001_initial")
def m001_initial(db: Database) -> None:
    """Repositories, import batches, Q&A pairs with provenance, and the append-only decision log."""
    db.executescript(
        """
        CREATE TABLE repositories (
            name TEXT PRIMARY KEY,
            url TEXT,
            commit_sha TEXT,
            commit_verified INTEGER NOT NULL DEFAULT 0,
            version_label TEXT,
            local_path TEXT,
            language TEXT,
            theme TEXT,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL
        );
        CREATE TABLE import_batches (
            id INTEGER PRIMARY KEY,
            format TEXT NOT NULL,
            file_name TEXT NOT NULL,
            file_path TEXT NOT NULL,
            file_sha256 TEXT NOT NULL,
            repository TEXT REFERENCES repositories(name),
            options_json TEXT NOT NULL DEFAULT '{}',
            read_count INTEGER NOT NULL,
            added_count INTEGER NOT NULL,
            already_present_count INTEGER NOT NULL,
            duplicate_count INTEGER NOT NULL,
            skipped_count INTEGER NOT NULL,
            skipped_json TEXT NOT NULL DEFAULT '[]',
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL
        );
        CREATE TABLE qa_pairs (
            id TEXT PRIMARY KEY,
            ordinal INTEGER NOT NULL UNIQUE,
            repository TEXT REFERENCES repositories(name),
            question TEXT NOT NULL,
            reference_answer TEXT,
            needs_reference INTEGER NOT NULL DEFAULT 0,
            category TEXT,
            qa_type TEXT,
            qa_subtype TEXT,
            cluster_id TEXT,
            cluster_name TEXT,
            language TEXT,
            theme TEXT,
            task_set TEXT,
            source_format TEXT NOT NULL,
            source_file TEXT NOT NULL,
            source_line INTEGER,
            source_unit TEXT NOT NULL DEFAULT 'line',
            source_upstream_id TEXT,
            import_batch_id INTEGER REFERENCES import_batches(id),
            extra_json TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL
        );
        CREATE INDEX qa_pairs_repository ON qa_pairs(repository, ordinal);
        CREATE INDEX qa_pairs_qa_type ON qa_pairs(qa_type, ordinal);
        CREATE INDEX qa_pairs_category ON qa_pairs(category, ordinal);
        CREATE TABLE review_decisions (
            id INTEGER PRIMARY KEY,
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            annotator TEXT NOT NULL,
            decision TEXT CHECK (decision IN ('accept', 'reject', 'skip')),
            previous_decision TEXT,
            reverts_id INTEGER REFERENCES review_decisions(id),
            created_at TEXT NOT NULL
        );
        CREATE INDEX review_decisions_pair ON review_decisions(qa_pair_id, annotator, id);
        CREATE INDEX review_decisions_annotator ON review_decisions(annotator, id);
        """
    )
    _append_only(db, "review_decisions")


@migrations(name="m002_review_state_and_notes")
def m002_review_state_and_notes(db: Database) -> None:
    """Notes per pair and annotator (append-only), and ``review_state``: each annotator's current decision.

    ``review_state`` is derived: a trigger keeps it equal to the latest ``review_decisions`` row per pair
    and annotator, and this migration fills it from decisions made before it existed.
    """
    db.executescript(
        """
        CREATE TABLE review_notes (
            id INTEGER PRIMARY KEY,
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            annotator TEXT NOT NULL,
            text TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX review_notes_pair ON review_notes(qa_pair_id, annotator, id);
        CREATE TABLE review_state (
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            annotator TEXT NOT NULL,
            decision TEXT,
            decision_id INTEGER NOT NULL REFERENCES review_decisions(id),
            updated_at TEXT NOT NULL,
            PRIMARY KEY (qa_pair_id, annotator)
        );
        CREATE INDEX review_state_annotator ON review_state(annotator, decision);
        CREATE TRIGGER review_decisions_current AFTER INSERT ON review_decisions
        BEGIN
            INSERT INTO review_state (qa_pair_id, annotator, decision, decision_id, updated_at)
            VALUES (NEW.qa_pair_id, NEW.annotator, NEW.decision, NEW.id, NEW.created_at)
            ON CONFLICT (qa_pair_id, annotator) DO UPDATE SET
                decision = excluded.decision, decision_id = excluded.decision_id,
                updated_at = excluded.updated_at;
        END;
        INSERT INTO review_state (qa_pair_id, annotator, decision, decision_id, updated_at)
        SELECT d.qa_pair_id, d.annotator, d.decision, d.id, d.created_at
        FROM review_decisions d
        WHERE d.id = (SELECT max(id) FROM review_decisions x
                      WHERE x.qa_pair_id = d.qa_pair_id AND x.annotator = d.annotator);
        """
    )
    _append_only(db, "review_notes")




@migrations(name="m003_checklists")
def m003_checklists(db: Database) -> None:
    """Checklist versions per pair (append-only) and ``checklist_current``, kept by trigger.

    RepoProbe §4.1 checklists; a version is ``generated``, ``edited``, ``imported`` or ``adjudicated``;
    a draft may break the rules and is never released.
    """
    db.executescript(
        """
        CREATE TABLE checklist_versions (
            id INTEGER PRIMARY KEY,
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            version INTEGER NOT NULL,
            origin TEXT NOT NULL CHECK (origin IN ('generated', 'edited', 'imported', 'adjudicated')),
            is_draft INTEGER NOT NULL DEFAULT 0,
            is_valid INTEGER NOT NULL,
            author TEXT NOT NULL,
            created_at TEXT NOT NULL,
            parent_version INTEGER,
            restored_from INTEGER,
            source_format TEXT,
            items_json TEXT NOT NULL,
            violations_json TEXT NOT NULL DEFAULT '[]',
            UNIQUE (qa_pair_id, version)
        );
        CREATE TABLE checklist_current (
            qa_pair_id TEXT PRIMARY KEY REFERENCES qa_pairs(id),
            version_id INTEGER NOT NULL REFERENCES checklist_versions(id),
            version INTEGER NOT NULL,
            origin TEXT NOT NULL,
            is_draft INTEGER NOT NULL,
            is_valid INTEGER NOT NULL
        );
        CREATE INDEX checklist_current_state ON checklist_current(is_draft, is_valid);
        CREATE TRIGGER checklist_versions_current AFTER INSERT ON checklist_versions
        BEGIN
            INSERT INTO checklist_current (qa_pair_id, version_id, version, origin, is_draft, is_valid)
            VALUES (NEW.qa_pair_id, NEW.id, NEW.version, NEW.origin, NEW.is_draft, NEW.is_valid)
            ON CONFLICT (qa_pair_id) DO UPDATE SET
                version_id = excluded.version_id, version = excluded.version, origin = excluded.origin,
                is_draft = excluded.is_draft, is_valid = excluded.is_valid
            WHERE excluded.version > checklist_current.version;
        END;
        """
    )
    _append_only(db, "checklist_versions")


_UID_KEYS = {
    "review_notes": "id, qa_pair_id, annotator, text, created_at",
    "checklist_versions": "id, qa_pair_id, version, author, created_at, items_json",
}


def _row_uid(table: str, values) -> str:
    """A uid derived from a row's content, so two copies of one project upgraded apart agree on it."""
    import hashlib

    h = hashlib.sha256(table.encode())
    for v in values:
        h.update(b"\x1f" + str(v).encode("utf-8"))
    return h.hexdigest()[:32]


def _add_uid(db: Database, table: str) -> None:
    """Give every row of an append-only table a unique ``uid`` (merges match rows across copies by it)."""
    db.execute(f"ALTER TABLE {table} ADD COLUMN uid TEXT")
    for op in ("update", "delete"):
        db.execute(f"DROP TRIGGER IF EXISTS {table}_no_{op}")
    key = _UID_KEYS[table]
    rows = db.execute(f"SELECT id, {key} FROM {table} WHERE uid IS NULL").fetchall()
    db.conn.executemany(f"UPDATE {table} SET uid = ? WHERE id = ?", [(_row_uid(table, r[1:]), r[0]) for r in rows])
    db.execute(f"CREATE UNIQUE INDEX {table}_uid ON {table}(uid)")
    _append_only(db, table)


@migrations(name="m004_reviews_assignments_adjudication_events")
def m004_reviews_assignments_adjudication_events(db: Database) -> None:
    """Several annotators (issue "Several annotators"): reviews with the four QA criteria (RepoProbe §3.2
    "Quality Assurance") and the ``revise`` decision, assignments, project settings, adjudications, and
    the append-only audit trail ``events`` filled by triggers; ``uid`` on every append-only row for merges.

    ``review_decisions`` is rebuilt to widen its decision check; ``review_state`` now follows the latest
    decision by time, so rows merged from another copy later do not overtake newer ones.
    """
    db.conn.create_function(
        "bw_row_uid", 6, lambda *v: _row_uid("review_decisions", v), deterministic=True
    )
    db.executescript(
        """
        DROP TABLE review_state;
        CREATE TABLE review_decisions_v4 (
            id INTEGER PRIMARY KEY,
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            annotator TEXT NOT NULL,
            decision TEXT CHECK (decision IN ('accept', 'reject', 'revise', 'skip')),
            previous_decision TEXT,
            reverts_id INTEGER REFERENCES review_decisions_v4(id),
            created_at TEXT NOT NULL,
            criteria_json TEXT,
            notes TEXT,
            uid TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(16))))
        );
        INSERT INTO review_decisions_v4 (id, qa_pair_id, annotator, decision, previous_decision, reverts_id,
                                         created_at, criteria_json, notes, uid)
        SELECT id, qa_pair_id, annotator, decision, previous_decision, reverts_id, created_at, NULL, NULL,
               bw_row_uid(id, qa_pair_id, annotator, decision, previous_decision, created_at)
        FROM review_decisions ORDER BY id;
        DROP TABLE review_decisions;
        ALTER TABLE review_decisions_v4 RENAME TO review_decisions;
        CREATE INDEX review_decisions_pair ON review_decisions(qa_pair_id, annotator, id);
        CREATE INDEX review_decisions_annotator ON review_decisions(annotator, id);
        CREATE TABLE review_state (
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            annotator TEXT NOT NULL,
            decision TEXT,
            decision_id INTEGER NOT NULL REFERENCES review_decisions(id),
            updated_at TEXT NOT NULL,
            PRIMARY KEY (qa_pair_id, annotator)
        );
        CREATE INDEX review_state_annotator ON review_state(annotator, decision);
        CREATE TRIGGER review_decisions_current AFTER INSERT ON review_decisions
        BEGIN
            INSERT INTO review_state (qa_pair_id, annotator, decision, decision_id, updated_at)
            VALUES (NEW.qa_pair_id, NEW.annotator, NEW.decision, NEW.id, NEW.created_at)
            ON CONFLICT (qa_pair_id, annotator) DO UPDATE SET
                decision = excluded.decision, decision_id = excluded.decision_id,
                updated_at = excluded.updated_at
            WHERE excluded.updated_at >= review_state.updated_at;
        END;
        INSERT INTO review_state (qa_pair_id, annotator, decision, decision_id, updated_at)
        SELECT d.qa_pair_id, d.annotator, d.decision, d.id, d.created_at
        FROM review_decisions d
        WHERE d.id = (SELECT x.id FROM review_decisions x
                      WHERE x.qa_pair_id = d.qa_pair_id AND x.annotator = d.annotator
                      ORDER BY x.created_at DESC, x.id DESC LIMIT 1);

        CREATE TABLE assignments (
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            annotator TEXT NOT NULL,
            assigned_at TEXT NOT NULL,
            assigned_by TEXT NOT NULL,
            seed INTEGER,
            PRIMARY KEY (qa_pair_id, annotator)
        );
        CREATE INDEX assignments_annotator ON assignments(annotator, qa_pair_id);
        CREATE TABLE settings (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            updated_by TEXT NOT NULL
        );
        CREATE TABLE adjudications (
            id INTEGER PRIMARY KEY,
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            adjudicator TEXT NOT NULL,
            decision TEXT NOT NULL CHECK (decision IN ('accept', 'reject', 'revise')),
            reason TEXT NOT NULL,
            checklist_version INTEGER,
            created_at TEXT NOT NULL,
            uid TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(16))))
        );
        CREATE INDEX adjudications_pair ON adjudications(qa_pair_id, id);
        CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            qa_pair_id TEXT NOT NULL,
            actor TEXT NOT NULL,
            kind TEXT NOT NULL,
            ref_table TEXT NOT NULL,
            ref_id INTEGER NOT NULL,
            before_json TEXT,
            after_json TEXT,
            created_at TEXT NOT NULL
        );
        CREATE INDEX events_pair ON events(qa_pair_id, id);
        CREATE TRIGGER review_decisions_event AFTER INSERT ON review_decisions
        BEGIN
            INSERT INTO events (qa_pair_id, actor, kind, ref_table, ref_id, before_json, after_json, created_at)
            VALUES (NEW.qa_pair_id, NEW.annotator,
                    CASE WHEN NEW.reverts_id IS NOT NULL THEN 'undo'
                         WHEN NEW.decision = 'skip' THEN 'skip' ELSE 'review' END,
                    'review_decisions', NEW.id,
                    json_object('decision', NEW.previous_decision),
                    json_object('decision', NEW.decision, 'criteria', json(coalesce(NEW.criteria_json, 'null')),
                                'notes', NEW.notes, 'reverts', NEW.reverts_id),
                    NEW.created_at);
        END;
        CREATE TRIGGER review_notes_event AFTER INSERT ON review_notes
        BEGIN
            INSERT INTO events (qa_pair_id, actor, kind, ref_table, ref_id, before_json, after_json, created_at)
            VALUES (NEW.qa_pair_id, NEW.annotator, 'note', 'review_notes', NEW.id,
                    json_object('text', (SELECT n.text FROM review_notes n WHERE n.qa_pair_id = NEW.qa_pair_id
                                         AND n.annotator = NEW.annotator AND n.id < NEW.id ORDER BY n.id DESC LIMIT 1)),
                    json_object('text', NEW.text), NEW.created_at);
        END;
        CREATE TRIGGER checklist_versions_event AFTER INSERT ON checklist_versions
        BEGIN
            INSERT INTO events (qa_pair_id, actor, kind, ref_table, ref_id, before_json, after_json, created_at)
            VALUES (NEW.qa_pair_id, NEW.author, 'checklist', 'checklist_versions', NEW.id,
                    json_object('version', NEW.parent_version),
                    json_object('version', NEW.version, 'origin', NEW.origin, 'draft', NEW.is_draft,
                                'valid', NEW.is_valid, 'restored_from', NEW.restored_from),
                    NEW.created_at);
        END;
        CREATE TRIGGER adjudications_event AFTER INSERT ON adjudications
        BEGIN
            INSERT INTO events (qa_pair_id, actor, kind, ref_table, ref_id, before_json, after_json, created_at)
            VALUES (NEW.qa_pair_id, NEW.adjudicator, 'adjudication', 'adjudications', NEW.id, NULL,
                    json_object('decision', NEW.decision, 'reason', NEW.reason,
                                'checklist_version', NEW.checklist_version),
                    NEW.created_at);
        END;
        INSERT INTO events (qa_pair_id, actor, kind, ref_table, ref_id, before_json, after_json, created_at)
        SELECT qa_pair_id, annotator, CASE WHEN reverts_id IS NOT NULL THEN 'undo'
                                           WHEN decision = 'skip' THEN 'skip' ELSE 'review' END,
               'review_decisions', id, json_object('decision', previous_decision),
               json_object('decision', decision, 'criteria', NULL, 'notes', NULL, 'reverts', reverts_id), created_at
        FROM review_decisions;
        INSERT INTO events (qa_pair_id, actor, kind, ref_table, ref_id, before_json, after_json, created_at)
        SELECT qa_pair_id, annotator, 'note', 'review_notes', id, NULL, json_object('text', text), created_at
        FROM review_notes;
        INSERT INTO events (qa_pair_id, actor, kind, ref_table, ref_id, before_json, after_json, created_at)
        SELECT qa_pair_id, author, 'checklist', 'checklist_versions', id, json_object('version', parent_version),
               json_object('version', version, 'origin', origin, 'draft', is_draft, 'valid', is_valid,
                           'restored_from', restored_from), created_at
        FROM checklist_versions;
        """
    )
    _append_only(db, "review_decisions")
    _append_only(db, "adjudications")
    _append_only(db, "events")
    _add_uid(db, "review_notes")
    _add_uid(db, "checklist_versions")


@migrations(name="m005_releases")
def m005_releases(db: Database) -> None:
    """Releases: one row per created release (name, version, time, who, where, manifest), append-only."""
    db.executescript(
        """
        CREATE TABLE releases (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            version TEXT NOT NULL,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            path TEXT NOT NULL,
            n_pairs INTEGER NOT NULL,
            manifest_json TEXT NOT NULL,
            UNIQUE (name, version)
        );
        """
    )
    _append_only(db, "releases")


@migrations(name="m006_probes")
def m006_probes(db: Database) -> None:
    """NITR probes: probes and their variants (replaced on re-import, with a fingerprint of every file),
    oracle runs with per-module results and logs (append-only), and oracle sign-offs (append-only)."""
    db.executescript(
        """
        CREATE TABLE probes (
            id TEXT PRIMARY KEY,
            title TEXT NOT NULL,
            primary_dimension TEXT,
            probe_json TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            imported_at TEXT NOT NULL,
            imported_by TEXT NOT NULL
        );
        CREATE TABLE probe_variants (
            probe_id TEXT NOT NULL REFERENCES probes(id),
            name TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('intended', 'shortcut', 'near-miss')),
            expected TEXT NOT NULL CHECK (expected IN ('pass', 'fail')),
            variant_json TEXT NOT NULL,
            PRIMARY KEY (probe_id, name)
        );
        CREATE TABLE oracle_runs (
            id INTEGER PRIMARY KEY,
            probe_id TEXT NOT NULL REFERENCES probes(id),
            variant TEXT,
            outcome TEXT NOT NULL CHECK (outcome IN ('pass', 'fail', 'error')),
            expected TEXT,
            fingerprint TEXT NOT NULL,
            run_json TEXT NOT NULL,
            duration_s REAL NOT NULL,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL
        );
        CREATE INDEX oracle_runs_probe ON oracle_runs(probe_id, variant, id);
        CREATE TABLE oracle_signoffs (
            id INTEGER PRIMARY KEY,
            probe_id TEXT NOT NULL REFERENCES probes(id),
            annotator TEXT NOT NULL,
            verdict TEXT NOT NULL CHECK (verdict IN ('signed-off', 'not-signed-off')),
            reason TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        """
    )
    _append_only(db, "oracle_runs")
    _append_only(db, "oracle_signoffs")


@migrations(name="m007_review_drafts")
def m007_review_drafts(db: Database) -> None:
    """Criteria marked but not yet submitted with a decision: kept per pair and annotator, so moving away
    or a crash loses none of them (a draft older than the annotator's latest decision is ignored)."""
    db.executescript(
        """
        CREATE TABLE review_drafts (
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            annotator TEXT NOT NULL,
            criteria_json TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (qa_pair_id, annotator)
        );
        """
    )


@migrations(name="m008_llm_ledger_and_curation")
def m008_llm_ledger_and_curation(db: Database) -> None:
    """The LLM call ledger (append-only, also the cache), the link store, and curation step results
    (RepoProbe §3.2 figure 2: classify, enrich, refine, checklist, verify), append-only with
    ``curation_current`` (latest result per pair and step) kept by trigger."""
    db.executescript(
        """
        CREATE TABLE llm_calls (
            id INTEGER PRIMARY KEY,
            created_at TEXT NOT NULL,
            provider TEXT NOT NULL,
            provider_kind TEXT NOT NULL,
            base_url TEXT,
            requested_model TEXT NOT NULL,
            returned_model TEXT,
            template_id TEXT,
            template_hash TEXT,
            request_hash TEXT NOT NULL,
            repeat_index INTEGER NOT NULL DEFAULT 0,
            attempt INTEGER NOT NULL DEFAULT 1,
            params_json TEXT NOT NULL DEFAULT '{}',
            status TEXT NOT NULL CHECK (status IN ('ok', 'invalid', 'refused', 'error', 'cancelled')),
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            latency_s REAL NOT NULL DEFAULT 0,
            cost_usd REAL,
            request_id TEXT,
            http_attempts INTEGER NOT NULL DEFAULT 1,
            http_status INTEGER,
            output_text TEXT,
            parsed_json TEXT,
            error TEXT,
            purpose TEXT,
            qa_pair_id TEXT,
            uid TEXT NOT NULL UNIQUE
        );
        CREATE INDEX llm_calls_cache ON llm_calls(request_hash, repeat_index, status, id);
        CREATE INDEX llm_calls_pair ON llm_calls(qa_pair_id, purpose, id);
        CREATE TABLE links (
            url TEXT PRIMARY KEY,
            content TEXT NOT NULL,
            source_file TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            added_at TEXT NOT NULL,
            added_by TEXT NOT NULL
        );
        CREATE TABLE curation_results (
            id INTEGER PRIMARY KEY,
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            step TEXT NOT NULL CHECK (step IN ('classify', 'enrich', 'refine', 'checklist', 'verify')),
            status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
            flagged INTEGER NOT NULL DEFAULT 0,
            output_json TEXT NOT NULL DEFAULT '{}',
            raw_text TEXT,
            reason TEXT,
            model TEXT,
            template_hash TEXT,
            call_ids_json TEXT NOT NULL DEFAULT '[]',
            calls_made INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            uid TEXT NOT NULL UNIQUE
        );
        CREATE INDEX curation_results_pair ON curation_results(qa_pair_id, step, id);
        CREATE TABLE curation_current (
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            step TEXT NOT NULL,
            result_id INTEGER NOT NULL REFERENCES curation_results(id),
            status TEXT NOT NULL,
            flagged INTEGER NOT NULL,
            PRIMARY KEY (qa_pair_id, step)
        );
        CREATE INDEX curation_current_flag ON curation_current(step, flagged);
        CREATE TRIGGER curation_results_current AFTER INSERT ON curation_results
        BEGIN
            INSERT INTO curation_current (qa_pair_id, step, result_id, status, flagged)
            VALUES (NEW.qa_pair_id, NEW.step, NEW.id, NEW.status, NEW.flagged)
            ON CONFLICT (qa_pair_id, step) DO UPDATE SET
                result_id = excluded.result_id, status = excluded.status, flagged = excluded.flagged;
        END;
        """
    )
    _append_only(db, "llm_calls")
    _append_only(db, "curation_results")


@migrations(name="m009_answers_and_judgments")
def m009_answers_and_judgments(db: Database) -> None:
    """Candidate answers (imported or generated) per pair, model and condition; judgments (checklist judge
    RepoProbe §4.2, scalar judges SWE-QA-Pro §4.1 and Code-QA-Bench "Evaluation", imported scores), one row
    per answer, judge and run, append-only; human score overrides and failure-mode labels (RepoProbe §5.4),
    append-only with the latest row winning."""
    db.executescript(
        """
        CREATE TABLE answers (
            id TEXT PRIMARY KEY,
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            model TEXT NOT NULL,
            condition TEXT NOT NULL
                CHECK (condition IN ('closed-book', 'code-only', 'documented', 'agentic', 'direct')),
            text TEXT NOT NULL,
            trajectory_json TEXT,
            source_format TEXT NOT NULL,
            source_file TEXT,
            source_line INTEGER,
            extra_json TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            UNIQUE (qa_pair_id, model, condition)
        );
        CREATE INDEX answers_model ON answers(model, condition);
        CREATE TABLE judgments (
            id INTEGER PRIMARY KEY,
            answer_id TEXT NOT NULL REFERENCES answers(id),
            judge TEXT NOT NULL CHECK (judge IN ('checklist', 'swe-qa-pro', 'code-qa-bench', 'imported')),
            judge_model TEXT NOT NULL,
            run_index INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL CHECK (status IN ('scored', 'unscored')),
            checklist_version INTEGER,
            scores_json TEXT NOT NULL DEFAULT '[]',
            score_rate REAL,
            scale_max INTEGER,
            seed INTEGER,
            critique TEXT,
            reason TEXT,
            raw_text TEXT,
            call_ids_json TEXT NOT NULL DEFAULT '[]',
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            uid TEXT NOT NULL UNIQUE
        );
        CREATE INDEX judgments_answer ON judgments(answer_id, judge, judge_model, run_index, id);
        CREATE TABLE score_overrides (
            id INTEGER PRIMARY KEY,
            judgment_id INTEGER NOT NULL REFERENCES judgments(id),
            key TEXT NOT NULL,
            original_score REAL,
            score REAL NOT NULL,
            reason TEXT NOT NULL CHECK (length(trim(reason)) > 0),
            annotator TEXT NOT NULL,
            created_at TEXT NOT NULL,
            uid TEXT NOT NULL UNIQUE
        );
        CREATE INDEX score_overrides_judgment ON score_overrides(judgment_id, key, id);
        CREATE TABLE failure_modes (
            id INTEGER PRIMARY KEY,
            answer_id TEXT NOT NULL REFERENCES answers(id),
            mode TEXT NOT NULL CHECK (mode IN ('edit-bias', 'shallow-explanation', 'misinterpretation',
                                              'context-miss', 'hallucination')),
            rationale TEXT NOT NULL DEFAULT '',
            origin TEXT NOT NULL CHECK (origin IN ('llm', 'annotator')),
            annotator TEXT,
            judge_model TEXT,
            call_ids_json TEXT NOT NULL DEFAULT '[]',
            created_at TEXT NOT NULL,
            uid TEXT NOT NULL UNIQUE
        );
        CREATE INDEX failure_modes_answer ON failure_modes(answer_id, id);
        """
    )
    for table in ("judgments", "score_overrides", "failure_modes"):
        _append_only(db, table)


@migrations(name="m010_work_claims_runs_input_hashes")
def m010_work_claims_runs_input_hashes(db: Database) -> None:
    """Claims on work items (two processes running the same step never pay for the same pair twice; a claim
    of a process that is gone counts for nothing), LLM runs (a stopped forced run resumes where it stopped),
    and the input hash of each curation result (a result whose input changed since is stale)."""
    db.executescript(
        """
        CREATE TABLE work_claims (
            work TEXT NOT NULL,
            item TEXT NOT NULL,
            owner TEXT NOT NULL,
            claimed_at TEXT NOT NULL,
            PRIMARY KEY (work, item)
        );
        CREATE TABLE llm_runs (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            signature TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            created_by TEXT NOT NULL
        );
        CREATE INDEX llm_runs_open ON llm_runs(signature, finished_at, id);
        ALTER TABLE curation_results ADD COLUMN input_hash TEXT;
        """
    )



_LLM_CALL_COLUMNS_M008 = (
    "id, created_at, provider, provider_kind, base_url, requested_model, returned_model, template_id, template_hash, "
    "request_hash, repeat_index, attempt, params_json, status, input_tokens, output_tokens, cache_read_tokens, "
    "cache_write_tokens, latency_s, cost_usd, request_id, http_attempts, http_status, output_text, parsed_json, "
    "error, purpose, qa_pair_id, uid"
)


@migrations(name="m011_llm_stop_reasons")
def m011_llm_stop_reasons(db: Database) -> None:
    """Every ledger row records why generation stopped (``stop_reason``: stop, length, tool_use, content_filter,
    refusal, unknown; ``stop_reason_raw``: the provider's own value), and a call cut off at the token budget has
    status ``truncated``. SQLite cannot drop a CHECK in place, so ``llm_calls`` is rebuilt with every row copied
    (older rows have no stop reason: NULL), its indexes and its append-only triggers. ``status`` and
    ``stop_reason`` are checked on write against core's ``CallStatus`` and ``StopReason`` (no vocabulary frozen
    in SQL: a new status is a core change, not a migration)."""
    db.executescript(
        f"""
        CREATE TABLE llm_calls_m011 (
            id INTEGER PRIMARY KEY,
            created_at TEXT NOT NULL,
            provider TEXT NOT NULL,
            provider_kind TEXT NOT NULL,
            base_url TEXT,
            requested_model TEXT NOT NULL,
            returned_model TEXT,
            template_id TEXT,
            template_hash TEXT,
            request_hash TEXT NOT NULL,
            repeat_index INTEGER NOT NULL DEFAULT 0,
            attempt INTEGER NOT NULL DEFAULT 1,
            params_json TEXT NOT NULL DEFAULT '{{}}',
            status TEXT NOT NULL,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            latency_s REAL NOT NULL DEFAULT 0,
            cost_usd REAL,
            request_id TEXT,
            http_attempts INTEGER NOT NULL DEFAULT 1,
            http_status INTEGER,
            output_text TEXT,
            parsed_json TEXT,
            error TEXT,
            purpose TEXT,
            qa_pair_id TEXT,
            uid TEXT NOT NULL UNIQUE,
            stop_reason TEXT,
            stop_reason_raw TEXT
        );
        INSERT INTO llm_calls_m011 ({_LLM_CALL_COLUMNS_M008}) SELECT {_LLM_CALL_COLUMNS_M008} FROM llm_calls;
        DROP TABLE llm_calls;
        ALTER TABLE llm_calls_m011 RENAME TO llm_calls;
        CREATE INDEX llm_calls_cache ON llm_calls(request_hash, repeat_index, status, id);
        CREATE INDEX llm_calls_pair ON llm_calls(qa_pair_id, purpose, id);
        """
    )
    _append_only(db, "llm_calls")

@migrations(name="m012_text_repairs")
def m012_text_repairs(db: Database) -> None:
    """Records whose text held a lone surrogate (a JSON ``\\udc81`` escape from a file or a model), stored with
    U+FFFD in its place: one row per repaired record (table, rowid, columns, where the text came from),
    append-only. Written by the entry points (imports, LLM output) and by the store's write path, which repairs
    whatever reaches it (db/textguard.py)."""
    db.executescript(
        """
        CREATE TABLE text_repairs (
            id INTEGER PRIMARY KEY,
            table_name TEXT NOT NULL,
            row_id INTEGER NOT NULL,
            fields TEXT NOT NULL DEFAULT '',
            origin TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX text_repairs_row ON text_repairs(table_name, row_id);
        """
    )
    _append_only(db, "text_repairs")


@migrations(name="m013_pair_texts")
def m013_pair_texts(db: Database) -> None:
    """Text versions of Q&A pairs (``pair_texts``, append-only): version 1 (``original``) for every pair, with
    the normalized identity keys re-imports match on (core.models.pair_identity_key, question_identity_key);
    ``qa_pairs.question`` / ``reference_answer`` / ``needs_reference`` follow the latest version (trigger);
    ``origin`` is checked on write against core.models.TextOrigin (no vocabulary frozen in SQL);
    a new version is an audit event (``text``); import batches count updated texts and possible updates.
    Pair ids are not changed: every id stored anywhere stays valid."""
    from benchwright.core.models import pair_identity_key, question_identity_key

    db.executescript(
        """
        CREATE TABLE pair_texts (
            id INTEGER PRIMARY KEY,
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            version INTEGER NOT NULL CHECK (version >= 1),
            origin TEXT NOT NULL,
            question TEXT NOT NULL,
            reference_answer TEXT,
            identity_key TEXT NOT NULL,
            question_key TEXT NOT NULL,
            created_by TEXT,
            created_at TEXT NOT NULL,
            model TEXT,
            call_ids_json TEXT,
            restored_from INTEGER,
            import_batch_id INTEGER REFERENCES import_batches(id),
            source_file TEXT,
            source_line INTEGER,
            source_unit TEXT,
            uid TEXT NOT NULL UNIQUE,
            UNIQUE (qa_pair_id, version)
        );
        CREATE INDEX pair_texts_identity ON pair_texts(identity_key);
        CREATE INDEX pair_texts_question ON pair_texts(question_key);
        CREATE TRIGGER pair_texts_current AFTER INSERT ON pair_texts
        WHEN NEW.version > 1
             AND NEW.version = (SELECT max(version) FROM pair_texts WHERE qa_pair_id = NEW.qa_pair_id)
        BEGIN
            UPDATE qa_pairs SET question = NEW.question, reference_answer = NEW.reference_answer,
                   needs_reference = (NEW.reference_answer IS NULL
                                      OR trim(NEW.reference_answer, ' ' || char(9, 10, 11, 12, 13)) = '')
            WHERE id = NEW.qa_pair_id;
        END;
        CREATE TRIGGER pair_texts_event AFTER INSERT ON pair_texts WHEN NEW.version > 1
        BEGIN
            INSERT INTO events (qa_pair_id, actor, kind, ref_table, ref_id, before_json, after_json, created_at)
            SELECT NEW.qa_pair_id, coalesce(NEW.created_by, ''), 'text', 'pair_texts', NEW.id,
                   json_object('version', p.version, 'question', p.question, 'reference_answer', p.reference_answer),
                   json_object('version', NEW.version, 'origin', NEW.origin, 'question', NEW.question,
                               'reference_answer', NEW.reference_answer),
                   NEW.created_at
            FROM pair_texts p WHERE p.qa_pair_id = NEW.qa_pair_id AND p.version < NEW.version
            ORDER BY p.version DESC LIMIT 1;
        END;
        ALTER TABLE import_batches ADD COLUMN updated_count INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE import_batches ADD COLUMN possible_update_count INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE import_batches ADD COLUMN possible_updates_json TEXT NOT NULL DEFAULT '[]';
        """
    )
    _append_only(db, "pair_texts")
    rows = db.conn.execute(
        """SELECT p.id, p.repository, p.question, p.reference_answer, b.created_by, p.created_at, p.import_batch_id,
                  p.source_file, p.source_line, p.source_unit
           FROM qa_pairs p LEFT JOIN import_batches b ON b.id = p.import_batch_id ORDER BY p.ordinal"""
    ).fetchall()
    db.conn.executemany(
        f"INSERT INTO pair_texts ({PAIR_TEXT_COLUMNS}) VALUES ({', '.join('?' * len(PAIR_TEXT_COLUMNS.split(',')))})",
        ((pid, 1, "original", q, a, pair_identity_key(repo, q, a), question_identity_key(repo, q), by, at, batch,
          file, line, unit, original_text_uid(pid)) for pid, repo, q, a, by, at, batch, file, line, unit in rows),
    )


PAIR_TEXT_COLUMNS = (
    "qa_pair_id, version, origin, question, reference_answer, identity_key, question_key, created_by, created_at, "
    "import_batch_id, source_file, source_line, source_unit, uid"
)
"""The columns the store writes for a text version (the generated-text columns model, call_ids_json and
restored_from are for the curation steps)."""


def original_text_uid(pair_id: str) -> str:
    """The uid of a pair's version 1: the same in every copy of a project (merges match rows by uid)."""
    return _row_uid("pair_texts", (pair_id, 1))


@migrations(name="m014_pending_releases")
def m014_pending_releases(db: Database) -> None:
    """Releases being written: recorded (pending) before any file of the release is written and replaced by
    the ``releases`` row, in one transaction, once the folder is in place; so a release folder always has a
    record, and a record whose folder never appeared is dropped by the next attempt (docs/releases.md)."""
    db.executescript(
        """
        CREATE TABLE pending_releases (
            name TEXT NOT NULL,
            version TEXT NOT NULL,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            path TEXT NOT NULL,
            owner TEXT NOT NULL,
            started_at TEXT NOT NULL,
            PRIMARY KEY (name, version)
        );
        """
    )



@migrations(name="m015_model_results")
def m015_model_results(db: Database) -> None:
    """Model results on NITR cases: one verdict per configuration and case (append-only; the latest counts),
    imported from a pass matrix or recorded by an attempt, and the dimension and granularity of the cases they
    name (docs/probes.md, "Model results")."""
    db.executescript(
        """
        CREATE TABLE model_results (
            id INTEGER PRIMARY KEY,
            configuration TEXT NOT NULL,
            model TEXT NOT NULL,
            regime TEXT NOT NULL,
            case_number TEXT NOT NULL,
            outcome TEXT NOT NULL,
            origin TEXT NOT NULL,
            import_batch_id INTEGER REFERENCES import_batches(id),
            source_line INTEGER,
            oracle_run_id INTEGER REFERENCES oracle_runs(id),
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL
        );
        CREATE INDEX model_results_key ON model_results(configuration, case_number, id);
        CREATE TABLE result_cases (
            case_number TEXT PRIMARY KEY,
            case_id TEXT,
            primary_dimension TEXT,
            granularity TEXT,
            source TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            updated_by TEXT NOT NULL
        );
        """
    )
    _append_only(db, "model_results")


def _rebuild_without_checks(db: Database, table: str, columns: tuple[str, ...]) -> None:
    """Rebuild ``table`` with the ``CHECK (column IN (...))`` constraints of ``columns`` removed from its SQL and
    every row copied with its id; its indexes and triggers (append-only, current-row) are made again from their
    stored SQL. Foreign keys stay on: they are deferred for the transaction and the rows are back under the same
    name before it commits, so rows of other tables that reference this one stay valid (``foreign_key_check``)."""
    import re

    sql = db.conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", [table]).fetchone()[0]
    for column in columns:
        sql, n = re.subn(rf"\s+CHECK\s*\(\s*{column}\s+IN\s*\([^)]*\)\s*\)", "", sql, count=1)
        if n != 1:
            raise RuntimeError(f"{table}: no CHECK on {column} to remove")
    again = [r[0] for r in db.conn.execute(
        "SELECT sql FROM sqlite_master WHERE type IN ('index', 'trigger') AND tbl_name = ? AND sql IS NOT NULL "
        "ORDER BY type = 'trigger', rowid", [table])]
    old = f"{table}_before_rebuild"
    db.conn.execute("PRAGMA defer_foreign_keys = ON")
    db.conn.execute(f"CREATE TABLE {old} AS SELECT * FROM {table}")
    db.conn.execute(f"DROP TABLE {table}")
    db.conn.execute(sql)
    db.conn.execute(f"INSERT INTO {table} SELECT * FROM {old}")
    db.conn.execute(f"DROP TABLE {old}")
    for statement in again:
        db.conn.execute(statement)
    bad = db.conn.execute(f"PRAGMA foreign_key_check({table})").fetchall()
    if bad:
        raise RuntimeError(f"{table}: {len(bad)} rows lost their reference while rebuilding")


@migrations(name="m016_judges_and_steps_checked_on_write")
def m016_judges_and_steps_checked_on_write(db: Database) -> None:
    """``judgments.judge``, ``curation_results.step`` and ``failure_modes.mode`` lose their CHECKs: each is checked
    on write against its registry in core (``core.judges``, ``core.steps``, ``core.vocabulary``), so a new judge,
    step or failure mode is a registration in core, not another table rebuild. SQLite cannot drop a CHECK in place:
    the three tables are rebuilt with every row, id, index and trigger kept (docs/store.md)."""
    for table, column in (("judgments", "judge"), ("failure_modes", "mode"), ("curation_results", "step")):
        _rebuild_without_checks(db, table, (column,))


@migrations(name="m017_conditions_checked_on_write")
def m017_conditions_checked_on_write(db: Database) -> None:
    """``answers.condition`` loses its CHECK: it is checked on write against core's condition registry
    (``core.vocabulary.CONDITIONS``), like the judge, step and failure-mode names since m016. The table is rebuilt
    with every row and index kept; judgments and failure-mode labels keep pointing at their answers."""
    _rebuild_without_checks(db, "answers", ("condition",))



@migrations(name="m018_agent_answers")
def m018_agent_answers(db: Database) -> None:
    """What a model answering inside a repository needs (SWE-QA-Pro §3.1, Code-QA-Bench "Methodology"):

    - ``answers.sample_index``: an answer is (pair, model, condition, sample index); K samples are K answers. The
      UNIQUE constraint moves from (pair, model, condition) to include the sample index; existing answers are
      sample 0. The table is rebuilt with every row and index kept.
    - ``answer_runs``: one row per agent (or direct) run of a sample, finished or failed, with its trajectory and
      reason, so a run that was paid for is stored even when it produced no answer (append-only; the latest row
      of a (pair, model, condition, sample) is its state).
    - ``llm_calls.tool_calls_json``: the tool calls a model made in one call (JSON list of ``{id, name,
      arguments}``), so a cached agent turn replays its tool calls.
    - ``repositories.derived_from`` / ``derivation`` / ``manifest_json``: a repository made from another (the
      code-only copy of ``repo strip``), its kind and what was removed."""
    import re

    sql = db.conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'answers'").fetchone()[0]
    sql, n = re.subn(r"UNIQUE\s*\(\s*qa_pair_id\s*,\s*model\s*,\s*condition\s*\)",
                     "sample_index INTEGER NOT NULL DEFAULT 0 CHECK (sample_index >= 0),\n"
                     "            UNIQUE (qa_pair_id, model, condition, sample_index)", sql, count=1)
    if n != 1:
        raise RuntimeError("answers: no UNIQUE (qa_pair_id, model, condition) to widen")
    columns = [r[1] for r in db.conn.execute("PRAGMA table_info(answers)")]
    again = [r[0] for r in db.conn.execute(
        "SELECT sql FROM sqlite_master WHERE type IN ('index', 'trigger') AND tbl_name = 'answers' "
        "AND sql IS NOT NULL ORDER BY type = 'trigger', rowid")]
    db.conn.execute("PRAGMA defer_foreign_keys = ON")
    db.conn.execute("CREATE TABLE answers_before_m018 AS SELECT * FROM answers")
    db.conn.execute("DROP TABLE answers")
    db.conn.execute(sql)
    listed = ", ".join(columns)
    db.conn.execute(f"INSERT INTO answers ({listed}, sample_index) SELECT {listed}, 0 FROM answers_before_m018")
    db.conn.execute("DROP TABLE answers_before_m018")
    for statement in again:
        db.conn.execute(statement)
    if db.conn.execute("PRAGMA foreign_key_check(answers)").fetchall():
        raise RuntimeError("answers: rows lost their reference while rebuilding")
    db.executescript(
        """
        CREATE TABLE answer_runs (
            id INTEGER PRIMARY KEY,
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            model TEXT NOT NULL,
            condition TEXT NOT NULL,
            sample_index INTEGER NOT NULL DEFAULT 0 CHECK (sample_index >= 0),
            repository TEXT,
            status TEXT NOT NULL,
            reason TEXT,
            answer_id TEXT REFERENCES answers(id),
            turns INTEGER NOT NULL DEFAULT 0,
            trajectory_json TEXT,
            call_ids_json TEXT NOT NULL DEFAULT '[]',
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cost_usd REAL,
            settings_json TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL
        );
        CREATE INDEX answer_runs_key ON answer_runs(qa_pair_id, model, condition, sample_index, id);
        ALTER TABLE llm_calls ADD COLUMN tool_calls_json TEXT;
        ALTER TABLE repositories ADD COLUMN derived_from TEXT REFERENCES repositories(name);
        ALTER TABLE repositories ADD COLUMN derivation TEXT;
        ALTER TABLE repositories ADD COLUMN manifest_json TEXT;
        """
    )
    _append_only(db, "answer_runs")


@migrations(name="m019_repoprobe_pipeline")
def m019_repoprobe_pipeline(db: Database) -> None:
    """RepoProbe's pipeline end to end (§3.2, issue 16):

    - ``qa_pairs.text_version`` / ``reopened_at`` / ``reopened_reason``: the number of the pair's current text
      version, and when (and why: ``text``, ``evidence-stale``) the pair was last sent back to review. A review
      made before ``reopened_at`` judged another text or other evidence: the queue shows the pair as undecided
      again and the final decision ignores that review. A new text version (after the first) reopens the pair
      by trigger.
    - ``pair_texts`` rows are backfilled for ok ``enrich`` / ``refine`` results whose rewrite never became a text
      version (the rewrite is the item, RepoProbe §3.2 "Context Enhancement and Q&A Refinement").
    - ``checklist_versions.text_version``: the pair's text version current when the checklist version was saved
      (the text it was made from); a checklist made from an older text is stale.
    - ``text_acceptances``: an annotator accepting a rewrite (a text version), append-only.
    - ``import_batches.filtered_count`` / ``filtered_json``: valid records an importer left out by rule
      (unanswered, no accepted answer, category, relies on an image), each with its reason.
    - ``repositories.stars`` / ``created_on`` / ``answered_discussions``: the §3.2 repository-eligibility facts.
    - ``repository_pins``: every pin a repository had (``repos move``), append-only.
    - ``evidence_checks`` / ``evidence_current``: the re-resolution of a pair's citations at a new pin (ok or
      stale, with what changed), append-only; the latest per pair kept by trigger.
    - ``review_decisions.reason``: why a reject rejects (a failing QA criterion or ``directly-answerable``).
    """
    db.executescript(
        """
        ALTER TABLE qa_pairs ADD COLUMN text_version INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE qa_pairs ADD COLUMN reopened_at TEXT;
        ALTER TABLE qa_pairs ADD COLUMN reopened_reason TEXT;
        UPDATE qa_pairs SET text_version = coalesce(
            (SELECT max(t.version) FROM pair_texts t WHERE t.qa_pair_id = qa_pairs.id), 1);
        UPDATE qa_pairs SET reopened_at = (SELECT max(t.created_at) FROM pair_texts t
                                           WHERE t.qa_pair_id = qa_pairs.id AND t.version > 1),
                            reopened_reason = 'text'
        WHERE text_version > 1;
        DROP TRIGGER pair_texts_current;
        CREATE TRIGGER pair_texts_current AFTER INSERT ON pair_texts
        WHEN NEW.version > 1
             AND NEW.version = (SELECT max(version) FROM pair_texts WHERE qa_pair_id = NEW.qa_pair_id)
        BEGIN
            UPDATE qa_pairs SET question = NEW.question, reference_answer = NEW.reference_answer,
                   needs_reference = (NEW.reference_answer IS NULL
                                      OR trim(NEW.reference_answer, ' ' || char(9, 10, 11, 12, 13)) = ''),
                   text_version = NEW.version,
                   reopened_at = CASE WHEN reopened_at IS NULL OR reopened_at < NEW.created_at
                                      THEN NEW.created_at ELSE reopened_at END,
                   reopened_reason = 'text'
            WHERE id = NEW.qa_pair_id;
        END;
        CREATE INDEX qa_pairs_reopened ON qa_pairs(reopened_at) WHERE reopened_at IS NOT NULL;

        ALTER TABLE checklist_versions ADD COLUMN text_version INTEGER;
        UPDATE checklist_versions SET text_version = coalesce(
            (SELECT max(t.version) FROM pair_texts t WHERE t.qa_pair_id = checklist_versions.qa_pair_id
             AND t.created_at <= checklist_versions.created_at), 1);

        CREATE TABLE text_acceptances (
            id INTEGER PRIMARY KEY,
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            version INTEGER NOT NULL,
            annotator TEXT NOT NULL,
            created_at TEXT NOT NULL,
            uid TEXT NOT NULL UNIQUE DEFAULT (lower(hex(randomblob(16))))
        );
        CREATE INDEX text_acceptances_pair ON text_acceptances(qa_pair_id, version);

        ALTER TABLE import_batches ADD COLUMN filtered_count INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE import_batches ADD COLUMN filtered_json TEXT NOT NULL DEFAULT '[]';

        ALTER TABLE repositories ADD COLUMN stars INTEGER;
        ALTER TABLE repositories ADD COLUMN created_on TEXT;
        ALTER TABLE repositories ADD COLUMN answered_discussions INTEGER;
        CREATE TABLE repository_pins (
            id INTEGER PRIMARY KEY,
            repository TEXT NOT NULL REFERENCES repositories(name),
            commit_sha TEXT,
            version_label TEXT,
            local_path TEXT,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL
        );
        INSERT INTO repository_pins (repository, commit_sha, version_label, local_path, created_at, created_by)
        SELECT name, commit_sha, version_label, local_path, created_at, created_by FROM repositories
        WHERE commit_sha IS NOT NULL OR version_label IS NOT NULL;

        CREATE TABLE evidence_checks (
            id INTEGER PRIMARY KEY,
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            repository TEXT NOT NULL,
            from_pin TEXT,
            to_pin TEXT NOT NULL,
            status TEXT NOT NULL,
            changes_json TEXT NOT NULL DEFAULT '[]',
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL
        );
        CREATE INDEX evidence_checks_pair ON evidence_checks(qa_pair_id, id);
        CREATE TABLE evidence_current (
            qa_pair_id TEXT PRIMARY KEY REFERENCES qa_pairs(id),
            check_id INTEGER NOT NULL REFERENCES evidence_checks(id),
            status TEXT NOT NULL
        );
        CREATE INDEX evidence_current_status ON evidence_current(status);
        CREATE TRIGGER evidence_checks_current AFTER INSERT ON evidence_checks
        BEGIN
            INSERT INTO evidence_current (qa_pair_id, check_id, status) VALUES (NEW.qa_pair_id, NEW.id, NEW.status)
            ON CONFLICT (qa_pair_id) DO UPDATE SET check_id = excluded.check_id, status = excluded.status;
        END;

        ALTER TABLE review_decisions ADD COLUMN reason TEXT;
        """
    )
    _append_only(db, "text_acceptances")
    _append_only(db, "repository_pins")
    _append_only(db, "evidence_checks")
    _backfill_rewrites(db)


def _backfill_rewrites(db: Database) -> None:
    """m019: an ok current ``enrich`` / ``refine`` result whose question or answer differs from the pair's current
    text becomes a text version (origin ``enriched`` / ``refined``, with the result's model, calls and time), in
    pipeline order; the trigger reopens the pair."""
    import json
    import uuid

    from benchwright.core.models import pair_identity_key, question_identity_key

    rows = db.conn.execute(
        """SELECT r.qa_pair_id, r.step, r.output_json, r.model, r.call_ids_json, r.created_at, r.created_by,
                  p.repository
           FROM curation_current c JOIN curation_results r ON r.id = c.result_id
           JOIN qa_pairs p ON p.id = c.qa_pair_id
           WHERE c.step IN ('enrich', 'refine') AND c.status = 'ok'
           ORDER BY p.ordinal, CASE c.step WHEN 'enrich' THEN 0 ELSE 1 END"""
    ).fetchall()
    for pid, step, output_json, model, call_ids, at, by, repo in rows:
        out = json.loads(output_json or "{}")
        q, a = out.get("question"), out.get("answer")
        if not isinstance(q, str) or not q.strip():
            continue
        cur = db.conn.execute(
            "SELECT version, question, reference_answer FROM pair_texts WHERE qa_pair_id = ? "
            "ORDER BY version DESC LIMIT 1", [pid]).fetchone()
        if cur is None or (cur[1] == q and (cur[2] or "") == (a or "")):
            continue
        db.conn.execute(
            f"INSERT INTO pair_texts ({PAIR_TEXT_COLUMNS}, model, call_ids_json) "
            f"VALUES ({', '.join('?' * (len(PAIR_TEXT_COLUMNS.split(',')) + 2))})",
            (pid, cur[0] + 1, "enriched" if step == "enrich" else "refined", q, a,
             pair_identity_key(repo, q, a), question_identity_key(repo, q), by, at, None, None, None, None,
             uuid.uuid4().hex, model, call_ids),
        )


@migrations(name="m020_data_methods")
def m020_data_methods(db: Database) -> None:
    """SWE-QA-Pro's data methods (§2.1-§2.4, issue 17), each table documented in docs/store.md:

    - ``embeddings``: the vector cache, one row per (text SHA-256, model, dimensions), float32 little-endian.
    - ``issues``: issue texts imported as taxonomy seeds (§2.1), with the batch that brought them.
    - ``qa_pairs.split``: the pair's split (``train``, ``test``...), apart from its task set; backfilled from
      ``task_set`` where that held a split name. ``qa_pairs.cluster_origin``: who set the cluster
      (``imported``, ``annotator``, ``taxonomy``); backfilled ``imported`` where a cluster was set.
    - ``taxonomies`` / ``taxonomy_nodes`` / ``taxonomy_members``: versioned two-level taxonomies; every build,
      label run and edit is a new version (append-only).
    - ``cluster_assignments``: every cluster a pair was given (append-only); the latest is copied onto
      ``qa_pairs.cluster_id`` / ``cluster_name`` / ``cluster_origin`` by trigger.
    - ``dedup_runs`` / ``duplicate_groups`` / ``duplicate_members`` / ``duplicate_resolutions`` /
      ``multi_query_flags``: semantic dedup (§2.3); nothing is deleted, a resolution says what is kept.
    - ``calibration_runs`` / ``calibration_values``: difficulty calibration from direct answers (§2.3).
    - ``selections`` / ``selection_members``: named balanced samples (§2.4); the latest of a name counts.
    - ``item_stats_runs`` / ``item_stats``: per-pair statistics over a model panel.
    - ``leakage_checks``: reference-answer or checklist terms that a rewrite put into the question.
    """
    db.executescript(
        """
        CREATE TABLE embeddings (
            id INTEGER PRIMARY KEY,
            text_sha256 TEXT NOT NULL,
            model TEXT NOT NULL,
            dimensions INTEGER NOT NULL CHECK (dimensions > 0),
            vector BLOB NOT NULL CHECK (length(vector) = 4 * dimensions),
            provider TEXT NOT NULL,
            call_id INTEGER REFERENCES llm_calls(id),
            created_at TEXT NOT NULL,
            UNIQUE (text_sha256, model, dimensions)
        );

        CREATE TABLE issues (
            id TEXT PRIMARY KEY,
            repository TEXT NOT NULL,
            number INTEGER,
            title TEXT NOT NULL,
            body TEXT,
            labels_json TEXT NOT NULL DEFAULT '[]',
            url TEXT,
            state TEXT,
            text TEXT NOT NULL,
            text_bytes INTEGER NOT NULL,
            import_batch_id INTEGER REFERENCES import_batches(id),
            source_file TEXT,
            source_line INTEGER,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL
        );
        CREATE UNIQUE INDEX issues_number ON issues(repository, number) WHERE number IS NOT NULL;

        ALTER TABLE qa_pairs ADD COLUMN split TEXT;
        UPDATE qa_pairs SET split = lower(task_set)
        WHERE lower(task_set) IN ('train', 'test', 'dev', 'validation', 'val', 'eval');
        ALTER TABLE qa_pairs ADD COLUMN cluster_origin TEXT;
        UPDATE qa_pairs SET cluster_origin = 'imported'
        WHERE cluster_id IS NOT NULL OR cluster_name IS NOT NULL;

        CREATE TABLE taxonomies (
            id INTEGER PRIMARY KEY,
            lineage INTEGER NOT NULL,
            parent_id INTEGER REFERENCES taxonomies(id),
            operation TEXT NOT NULL,
            operation_json TEXT NOT NULL DEFAULT '{}',
            source TEXT NOT NULL,
            embedder_model TEXT NOT NULL,
            dimensions INTEGER NOT NULL,
            params_json TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL
        );
        CREATE TABLE taxonomy_nodes (
            taxonomy_id INTEGER NOT NULL REFERENCES taxonomies(id),
            node_id TEXT NOT NULL,
            parent_node TEXT,
            level INTEGER NOT NULL CHECK (level IN (1, 2)),
            label TEXT,
            description TEXT,
            label_origin TEXT,
            label_model TEXT,
            label_call_ids_json TEXT,
            label_by TEXT,
            label_at TEXT,
            size INTEGER NOT NULL DEFAULT 0,
            centroid BLOB,
            PRIMARY KEY (taxonomy_id, node_id)
        );
        CREATE TABLE taxonomy_members (
            taxonomy_id INTEGER NOT NULL REFERENCES taxonomies(id),
            item_id TEXT NOT NULL,
            node_id TEXT NOT NULL,
            distance REAL,
            PRIMARY KEY (taxonomy_id, item_id)
        );
        CREATE INDEX taxonomy_members_node ON taxonomy_members(taxonomy_id, node_id);

        CREATE TABLE cluster_assignments (
            id INTEGER PRIMARY KEY,
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            taxonomy_id INTEGER REFERENCES taxonomies(id),
            node_id TEXT,
            cluster_id TEXT,
            cluster_name TEXT,
            origin TEXT NOT NULL,
            distance REAL,
            previous_cluster_id TEXT,
            previous_cluster_name TEXT,
            previous_origin TEXT,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL
        );
        CREATE INDEX cluster_assignments_pair ON cluster_assignments(qa_pair_id);
        CREATE TRIGGER cluster_assignments_current AFTER INSERT ON cluster_assignments
        BEGIN
            UPDATE qa_pairs SET cluster_id = NEW.cluster_id, cluster_name = NEW.cluster_name,
                   cluster_origin = NEW.origin
            WHERE id = NEW.qa_pair_id;
        END;

        CREATE TABLE dedup_runs (
            id INTEGER PRIMARY KEY,
            scope TEXT NOT NULL,
            threshold REAL NOT NULL,
            across_splits INTEGER NOT NULL DEFAULT 0,
            embedder_model TEXT NOT NULL,
            dimensions INTEGER NOT NULL,
            params_json TEXT NOT NULL DEFAULT '{}',
            pair_count INTEGER NOT NULL DEFAULT 0,
            group_count INTEGER NOT NULL DEFAULT 0,
            cross_split_group_count INTEGER NOT NULL DEFAULT 0,
            multi_query_count INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL
        );
        CREATE TABLE duplicate_groups (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES dedup_runs(id),
            kind TEXT NOT NULL CHECK (kind IN ('duplicate', 'cross-split')),
            scope_key TEXT,
            signature TEXT NOT NULL,
            representative TEXT NOT NULL REFERENCES qa_pairs(id),
            max_score REAL NOT NULL,
            edges_json TEXT NOT NULL DEFAULT '[]'
        );
        CREATE INDEX duplicate_groups_run ON duplicate_groups(run_id);
        CREATE INDEX duplicate_groups_signature ON duplicate_groups(signature);
        CREATE TABLE duplicate_members (
            group_id INTEGER NOT NULL REFERENCES duplicate_groups(id),
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            split TEXT,
            max_score REAL NOT NULL,
            PRIMARY KEY (group_id, qa_pair_id)
        );
        CREATE INDEX duplicate_members_pair ON duplicate_members(qa_pair_id);
        CREATE TABLE duplicate_resolutions (
            id INTEGER PRIMARY KEY,
            signature TEXT NOT NULL,
            group_id INTEGER REFERENCES duplicate_groups(id),
            decision TEXT NOT NULL CHECK (decision IN ('keep-one', 'keep-both', 'merge')),
            kept_json TEXT NOT NULL DEFAULT '[]',
            dropped_json TEXT NOT NULL DEFAULT '[]',
            merged_into TEXT REFERENCES qa_pairs(id),
            note TEXT,
            annotator TEXT NOT NULL,
            created_at TEXT NOT NULL,
            uid TEXT NOT NULL UNIQUE
        );
        CREATE INDEX duplicate_resolutions_signature ON duplicate_resolutions(signature);
        CREATE TABLE multi_query_flags (
            run_id INTEGER NOT NULL REFERENCES dedup_runs(id),
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            parts_json TEXT NOT NULL,
            PRIMARY KEY (run_id, qa_pair_id)
        );

        CREATE TABLE calibration_runs (
            id INTEGER PRIMARY KEY,
            models_json TEXT NOT NULL,
            judge TEXT NOT NULL,
            judge_model TEXT,
            condition TEXT NOT NULL,
            samples INTEGER,
            rule TEXT NOT NULL,
            threshold REAL NOT NULL,
            params_json TEXT NOT NULL DEFAULT '{}',
            model_stats_json TEXT NOT NULL DEFAULT '{}',
            pair_count INTEGER NOT NULL DEFAULT 0,
            too_easy_count INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL
        );
        CREATE TABLE calibration_values (
            run_id INTEGER NOT NULL REFERENCES calibration_runs(id),
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            scores_json TEXT NOT NULL,
            mean_z REAL,
            min_z REAL,
            decision TEXT NOT NULL,
            PRIMARY KEY (run_id, qa_pair_id)
        );

        CREATE TABLE selections (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            params_json TEXT NOT NULL DEFAULT '{}',
            seed INTEGER,
            size INTEGER NOT NULL,
            coverage_json TEXT NOT NULL DEFAULT '{}',
            shortfalls_json TEXT NOT NULL DEFAULT '[]',
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL
        );
        CREATE INDEX selections_name ON selections(name);
        CREATE TABLE selection_members (
            selection_id INTEGER NOT NULL REFERENCES selections(id),
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            position INTEGER NOT NULL,
            cluster_id TEXT,
            qa_type TEXT,
            PRIMARY KEY (selection_id, qa_pair_id)
        );

        CREATE TABLE item_stats_runs (
            id INTEGER PRIMARY KEY,
            judge TEXT NOT NULL,
            judge_model TEXT,
            condition TEXT,
            models_json TEXT NOT NULL,
            thresholds_json TEXT NOT NULL DEFAULT '{}',
            pair_count INTEGER NOT NULL DEFAULT 0,
            counts_json TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL
        );
        CREATE TABLE item_stats (
            run_id INTEGER NOT NULL REFERENCES item_stats_runs(id),
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            models INTEGER NOT NULL,
            mean REAL,
            sd REAL,
            pass_share REAL,
            discrimination REAL,
            flags_json TEXT NOT NULL DEFAULT '[]',
            scores_json TEXT NOT NULL DEFAULT '{}',
            PRIMARY KEY (run_id, qa_pair_id)
        );

        CREATE TABLE leakage_checks (
            id INTEGER PRIMARY KEY,
            qa_pair_id TEXT NOT NULL REFERENCES qa_pairs(id),
            text_version INTEGER NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('leaked', 'clean')),
            spans_json TEXT NOT NULL DEFAULT '[]',
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL
        );
        CREATE INDEX leakage_checks_pair ON leakage_checks(qa_pair_id, text_version);
        """
    )
    for table in ("embeddings", "taxonomies", "taxonomy_nodes", "taxonomy_members", "cluster_assignments",
                  "dedup_runs", "duplicate_groups", "duplicate_members", "duplicate_resolutions",
                  "multi_query_flags", "calibration_runs", "calibration_values", "selections",
                  "selection_members", "item_stats_runs", "item_stats", "leakage_checks"):
        _append_only(db, table)


@migrations(name="m021_latest_run_indexes")
def m021_latest_run_indexes(db: Database) -> None:
    """Indexes for "a pair's latest run": ``calibration_values`` and ``item_stats`` by (``qa_pair_id``,
    ``run_id``). The queue filters ``difficulty=`` and ``item=`` and the card's counts look up each pair's
    highest run id; without them every lookup scanned the table (5 s per filter on 10,000 calibrated pairs, 0.04 s
    with them)."""
    db.executescript(
        """
        CREATE INDEX IF NOT EXISTS calibration_values_pair ON calibration_values(qa_pair_id, run_id);
        CREATE INDEX IF NOT EXISTS item_stats_pair ON item_stats(qa_pair_id, run_id);
        """
    )

@migrations(name="m023_answer_first")
def m023_answer_first(db: Database) -> None:
    """Answer-first generation (Code-QA-Bench "Methodology" 3 and 4): ``doc_chunk_runs`` (one
    ``generate doc-chunks`` run: repository, pin, settings, counts), ``doc_chunks`` (the chunks a run kept, with
    features and score) and ``generation_results`` (each gold / audit / question result of a chunk, with its
    calls, trajectory and the pair it made). All append-only."""
    db.executescript(
        """
        CREATE TABLE doc_chunk_runs (
            id INTEGER PRIMARY KEY,
            repository TEXT NOT NULL REFERENCES repositories(name),
            pin TEXT NOT NULL,
            settings_json TEXT NOT NULL DEFAULT '{}',
            top INTEGER,
            found INTEGER NOT NULL DEFAULT 0,
            kept INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL
        );
        CREATE TABLE doc_chunks (
            run_id INTEGER NOT NULL REFERENCES doc_chunk_runs(id),
            id TEXT NOT NULL,
            rank INTEGER NOT NULL,
            repository TEXT NOT NULL,
            pin TEXT NOT NULL,
            path TEXT NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            kind TEXT NOT NULL,
            title TEXT NOT NULL,
            text TEXT NOT NULL,
            scores_json TEXT NOT NULL DEFAULT '{}',
            references_json TEXT NOT NULL DEFAULT '[]',
            score REAL NOT NULL,
            PRIMARY KEY (run_id, id)
        );
        CREATE INDEX doc_chunks_id ON doc_chunks(id);
        CREATE TABLE generation_results (
            id INTEGER PRIMARY KEY,
            chunk_id TEXT NOT NULL,
            repository TEXT NOT NULL,
            step TEXT NOT NULL CHECK (step IN ('gold', 'audit', 'question')),
            task_set TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
            flagged INTEGER NOT NULL DEFAULT 0,
            output_json TEXT NOT NULL DEFAULT '{}',
            reason TEXT,
            raw_text TEXT,
            model TEXT,
            template_hash TEXT,
            input_hash TEXT,
            call_ids_json TEXT NOT NULL DEFAULT '[]',
            calls_made INTEGER NOT NULL DEFAULT 0,
            trajectory_json TEXT,
            qa_pair_id TEXT REFERENCES qa_pairs(id),
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL
        );
        CREATE INDEX generation_results_chunk ON generation_results(chunk_id, step, task_set, id);
        """
    )
    for table in ("doc_chunk_runs", "doc_chunks", "generation_results"):
        _append_only(db, table)


@migrations(name="m022_task_sets")
def m022_task_sets(db: Database) -> None:
    """``qa_pairs.task_set`` holds task sets only (Code-QA-Bench's ``code-derivable`` / ``doc-dependent``,
    :data:`benchwright.core.vocabulary.TASK_SETS`): a split name the SWE-QA-Pro importer used to write there
    (``test``, ``train``, ...) is cleared where m020 already copied it, lower-cased, into ``split``. Nothing is lost:
    the split is in ``split``. Other values a ``--map task_set=`` import stored before issue 18 are kept as they
    are (the import now refuses them)."""
    db.execute(
        "UPDATE qa_pairs SET task_set = NULL WHERE task_set IS NOT NULL AND split IS NOT NULL"
        " AND lower(task_set) = split"
    )

"""Number of migrations this version of benchwright knows; recorded in exports."""


@migrations(name="m024_batches")
def m024_batches(db: Database) -> None:
    """Batch mode (issue 19): ``llm_batches`` (one batch sent to a provider's batch API, or written to a
    ``--batch-file``: its label, provider, local status, the provider's id, status and counts, the command that made
    it) and ``llm_batch_requests`` (each request of a batch: its ``custom_id``, cache key, the line as sent, the
    result as the provider returned it, and the ledger row made from it). Both are committed before the batch is
    submitted, so a killed client resumes instead of paying twice. ``llm_calls.batch_id`` names the batch a call's
    answer came from (its cost is at the batch price)."""
    db.executescript(
        """
        CREATE TABLE llm_batches (
            id INTEGER PRIMARY KEY,
            label TEXT NOT NULL UNIQUE,
            provider TEXT NOT NULL,
            provider_kind TEXT NOT NULL,
            base_url TEXT,
            endpoint TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('pending', 'submitted', 'ended', 'collected', 'failed',
                                                   'exported')),
            provider_batch_id TEXT,
            provider_status TEXT,
            counts_json TEXT NOT NULL DEFAULT '{}',
            request_count INTEGER NOT NULL,
            bytes INTEGER NOT NULL,
            error TEXT,
            file TEXT,
            command_json TEXT NOT NULL DEFAULT '[]',
            retry_of INTEGER REFERENCES llm_batches(id),
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            submitted_at TEXT,
            ended_at TEXT,
            collected_at TEXT,
            polled_at TEXT
        );
        CREATE INDEX llm_batches_status ON llm_batches(status, id);
        CREATE TABLE llm_batch_requests (
            custom_id TEXT PRIMARY KEY,
            batch_id INTEGER NOT NULL REFERENCES llm_batches(id),
            request_hash TEXT NOT NULL,
            repeat_index INTEGER NOT NULL,
            purpose TEXT,
            qa_pair_id TEXT,
            line_json TEXT NOT NULL,
            result_kind TEXT CHECK (result_kind IN ('succeeded', 'errored', 'expired', 'cancelled', 'missing')),
            result_json TEXT,
            call_id INTEGER REFERENCES llm_calls(id),
            collected_at TEXT
        );
        CREATE INDEX llm_batch_requests_key ON llm_batch_requests(request_hash, repeat_index, batch_id);
        CREATE INDEX llm_batch_requests_batch ON llm_batch_requests(batch_id);
        ALTER TABLE llm_calls ADD COLUMN batch_id INTEGER REFERENCES llm_batches(id);
        """
    )


@migrations(name="m025_queue_indexes")
def m025_queue_indexes(db: Database) -> None:
    """Indexes for the app's start and the queue on a large project (issue 19 item 6): ``qa_pairs_queue_order``
    (``ordinal, id, reopened_at``: the queue's walk in order, with what the status filters read of the pair,
    without reading its texts), ``qa_pairs_split`` (the distinct splits and the ``split=`` filter; partial: only
    pairs with a split) and ``review_state_pair_decision`` (``qa_pair_id, decision``: progress counts the pairs
    decided by anyone in one pass in pair order). On 100,000 pairs with 60,000 decided, ``Store.progress`` went
    from ~1 s to ~30 ms and ``pair_splits`` from ~0.2 s to < 1 ms."""
    db.executescript(
        """
        CREATE INDEX IF NOT EXISTS qa_pairs_queue_order ON qa_pairs(ordinal, id, reopened_at);
        CREATE INDEX IF NOT EXISTS qa_pairs_split ON qa_pairs(split, ordinal) WHERE split IS NOT NULL;
        CREATE INDEX IF NOT EXISTS review_state_pair_decision ON review_state(qa_pair_id, decision);
        """
    )


@migrations(name="m026_answer_assignments")
def m026_answer_assignments(db: Database) -> None:
    """``answer_assignments`` (issue 20 item 5): answers handed out to annotators to score against their
    checklists (human judgments, judge ``human``), like ``assignments`` for pairs: one row per (answer,
    annotator), the whole plan replaced by each ``assign --answers``; ``seed`` the plan's seed."""
    db.executescript(
        """
        CREATE TABLE answer_assignments (
            answer_id TEXT NOT NULL REFERENCES answers(id),
            annotator TEXT NOT NULL,
            assigned_at TEXT NOT NULL,
            assigned_by TEXT NOT NULL,
            seed INTEGER,
            PRIMARY KEY (answer_id, annotator)
        );
        CREATE INDEX answer_assignments_annotator ON answer_assignments(annotator, answer_id);
        """
    )


@migrations(name="m027_release_pushes")
def m027_release_pushes(db: Database) -> None:
    """``release_pushes`` (issue 20 item 4): one append-only row per release folder pushed to a Hugging Face Hub
    (``benchwright releases push``): which release (name, version, the manifest's sha256), where (endpoint, repo id,
    revision, private), the Hub's commit (url, oid), when and by whom. No token is ever stored."""
    db.executescript(
        """
        CREATE TABLE IF NOT EXISTS release_pushes (
            id INTEGER PRIMARY KEY,
            release_name TEXT NOT NULL,
            release_version TEXT NOT NULL,
            manifest_sha256 TEXT NOT NULL,
            endpoint TEXT NOT NULL,
            repo_id TEXT NOT NULL,
            revision TEXT NOT NULL,
            private INTEGER NOT NULL,
            commit_url TEXT NOT NULL,
            commit_oid TEXT NOT NULL,
            pushed_at TEXT NOT NULL,
            pushed_by TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS release_pushes_release ON release_pushes(release_name, release_version);
        """
    )

@migrations(name="m028_review_resume")
def m028_review_resume(db: Database) -> None:
    """``review_resume`` (issue 19 item 6): where ``Store.first_undecided`` starts looking, per annotator, so the
    app's start does not walk past every decided pair. ``ordinal`` is a lower bound: every pair with a smaller
    ordinal has a decision by ``annotator`` (not undone, not made before its pair was reopened). The store
    writes it when it found the first undecided pair; triggers only ever lower it: an undo or a deleted or moved
    state row (``review_state``), a pair inserted, reopened or renumbered below it (``qa_pairs``). A missing row
    means "from the start"."""
    lower = "UPDATE review_resume SET ordinal = {o} WHERE ordinal > {o}"
    state = "(SELECT ordinal FROM qa_pairs WHERE id = {r}.qa_pair_id)"
    db.executescript(
        f"""
        CREATE TABLE IF NOT EXISTS review_resume (
            annotator TEXT PRIMARY KEY,
            ordinal INTEGER NOT NULL
        );
        CREATE TRIGGER IF NOT EXISTS review_resume_state_insert AFTER INSERT ON review_state
        WHEN NEW.decision IS NULL BEGIN
            {lower.format(o=state.format(r="NEW"))} AND annotator = NEW.annotator;
        END;
        CREATE TRIGGER IF NOT EXISTS review_resume_state_update AFTER UPDATE ON review_state
        WHEN NEW.decision IS NULL OR NEW.qa_pair_id IS NOT OLD.qa_pair_id OR NEW.annotator IS NOT OLD.annotator
        BEGIN
            {lower.format(o=state.format(r="OLD"))} AND annotator = OLD.annotator;
            {lower.format(o=state.format(r="NEW"))} AND annotator = NEW.annotator;
        END;
        CREATE TRIGGER IF NOT EXISTS review_resume_state_delete AFTER DELETE ON review_state BEGIN
            {lower.format(o=state.format(r="OLD"))} AND annotator = OLD.annotator;
        END;
        CREATE TRIGGER IF NOT EXISTS review_resume_pair_insert AFTER INSERT ON qa_pairs BEGIN
            {lower.format(o="NEW.ordinal")};
        END;
        CREATE TRIGGER IF NOT EXISTS review_resume_pair_update AFTER UPDATE OF ordinal, reopened_at ON qa_pairs
        WHEN NEW.reopened_at IS NOT OLD.reopened_at OR NEW.ordinal IS NOT OLD.ordinal BEGIN
            {lower.format(o="NEW.ordinal")};
        END;
        """
    )


SCHEMA_VERSION = len(migrations._migrations)
