// Every label keeps how many open and closed issues and pull requests carry it (Forgejo's
// num_issues / num_closed_issues), so that a repository's issue list filtered by one label counts
// its matches without reading them (bench:issues: counting the open issues of one label of 100,000
// took 29 ms of the list's 33). Triggers keep the counts however a row changes — a label added or
// removed, an issue closed or reopened, an issue, label or whole repository deleted — so that no
// writer can forget them.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`ALTER TABLE labels
    ADD COLUMN open_issues integer NOT NULL DEFAULT 0,
    ADD COLUMN closed_issues integer NOT NULL DEFAULT 0,
    ADD COLUMN open_pulls integer NOT NULL DEFAULT 0,
    ADD COLUMN closed_pulls integer NOT NULL DEFAULT 0`
  yield* sql`UPDATE labels l SET open_issues = c.open_issues, closed_issues = c.closed_issues,
      open_pulls = c.open_pulls, closed_pulls = c.closed_pulls
    FROM (SELECT il.label_id,
        count(*) FILTER (WHERE NOT i.is_pull AND NOT i.is_closed) AS open_issues,
        count(*) FILTER (WHERE NOT i.is_pull AND i.is_closed) AS closed_issues,
        count(*) FILTER (WHERE i.is_pull AND NOT i.is_closed) AS open_pulls,
        count(*) FILTER (WHERE i.is_pull AND i.is_closed) AS closed_pulls
      FROM issue_labels il JOIN issues i ON i.id = il.issue_id GROUP BY il.label_id) c
    WHERE c.label_id = l.id`

  // Adds `delta` to the count of the labels in `ids` for an issue of this kind and state. The rows
  // are locked in id order first, so that two transactions counting the same labels cannot
  // deadlock on them.
  yield* sql.unsafe(`CREATE FUNCTION labels_count(ids bigint[], pull boolean, closed boolean, delta integer)
    RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM 1 FROM labels WHERE id = ANY (ids) ORDER BY id FOR UPDATE;
      UPDATE labels SET
        open_issues = open_issues + CASE WHEN NOT pull AND NOT closed THEN delta ELSE 0 END,
        closed_issues = closed_issues + CASE WHEN NOT pull AND closed THEN delta ELSE 0 END,
        open_pulls = open_pulls + CASE WHEN pull AND NOT closed THEN delta ELSE 0 END,
        closed_pulls = closed_pulls + CASE WHEN pull AND closed THEN delta ELSE 0 END
      WHERE id = ANY (ids);
    END
  $$`)

  // A label put on or taken off an issue. An issue being deleted is no longer found when its
  // label rows go with it: its own trigger below has already taken it out of the counts.
  yield* sql.unsafe(`CREATE FUNCTION issue_labels_count() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      issue record;
    BEGIN
      IF TG_OP = 'INSERT' THEN
        SELECT is_pull, is_closed INTO issue FROM issues WHERE id = NEW.issue_id;
        PERFORM labels_count(ARRAY[NEW.label_id], issue.is_pull, issue.is_closed, 1);
      ELSE
        SELECT is_pull, is_closed INTO issue FROM issues WHERE id = OLD.issue_id;
        IF FOUND THEN
          PERFORM labels_count(ARRAY[OLD.label_id], issue.is_pull, issue.is_closed, -1);
        END IF;
      END IF;
      RETURN NULL;
    END
  $$`)
  yield* sql`CREATE TRIGGER issue_labels_count AFTER INSERT OR DELETE ON issue_labels
    FOR EACH ROW EXECUTE FUNCTION issue_labels_count()`

  // An issue closed, reopened or deleted moves or removes it in the counts of all its labels.
  yield* sql.unsafe(`CREATE FUNCTION issues_label_count() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      ids bigint[];
    BEGIN
      SELECT array_agg(label_id) INTO ids FROM issue_labels WHERE issue_id = OLD.id;
      IF ids IS NULL THEN
        RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NULL END;
      END IF;
      PERFORM labels_count(ids, OLD.is_pull, OLD.is_closed, -1);
      IF TG_OP = 'DELETE' THEN
        RETURN OLD;
      END IF;
      PERFORM labels_count(ids, NEW.is_pull, NEW.is_closed, 1);
      RETURN NULL;
    END
  $$`)
  yield* sql`CREATE TRIGGER issues_label_count_delete BEFORE DELETE ON issues
    FOR EACH ROW EXECUTE FUNCTION issues_label_count()`
  yield* sql`CREATE TRIGGER issues_label_count_state AFTER UPDATE OF is_closed, is_pull ON issues
    FOR EACH ROW WHEN (OLD.is_closed IS DISTINCT FROM NEW.is_closed OR OLD.is_pull IS DISTINCT FROM NEW.is_pull)
    EXECUTE FUNCTION issues_label_count()`
})
