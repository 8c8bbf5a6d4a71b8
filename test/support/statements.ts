// Every SQL statement a test's server runs, in order: each statement is a span carrying its text
// (`db.query.text`), so a tracer of the test's own records them. Start the server with `layer`.
import { Layer, Tracer } from "effect"

export const recordStatements = () => {
  const statements: Array<string> = []
  const tracer = Tracer.make({
    span: (options) => {
      const span = new Tracer.NativeSpan(options)
      const attribute = span.attribute.bind(span)
      span.attribute = (key, value) => {
        if (key === "db.query.text") statements.push(String(value))
        attribute(key, value)
      }
      return span
    }
  })
  return { statements, layer: Layer.succeed(Tracer.Tracer)(tracer) }
}
