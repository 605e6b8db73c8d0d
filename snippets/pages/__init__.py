"""One page model per page, each a `base.Page` whose public attributes are the page's `{{ ... }}` names;
`scenario` names what the pages size for, `sources` records what a page reads and lists it, `units` holds
the figure constructors the pages share."""
