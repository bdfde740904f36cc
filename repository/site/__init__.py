"""The institution's own site (docs/operators/branding-and-pages.md): its branding over the settings' defaults
(`branding`, with the contrast rule in `colours`), its content pages in Markdown (`content`), maintenance banners
(`banners`), the Terms of use accepted at sign-up (`terms`), and what a page's layout reads of all of them at once
(`layout`). Every change is written to the audit log in the transaction of the change."""
