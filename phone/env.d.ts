/** The package version, put in by scripts/build-phone.mjs (Vite `define`): what the page calls itself in its hello. */
declare const __ELICITLY_VERSION__: string;
