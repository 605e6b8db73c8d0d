"""What a page shows, written once: figures and tables (`fmt`), SVG charts (`charts`) and diagrams
(`diagrams`), and the reference pages' "used by" links (`usage`). Every data string is escaped here."""
