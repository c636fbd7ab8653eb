/** The package version, put in by scripts/build-app.mjs (Vite `define`): the App's name and version for the host. */
declare const __ELICITLY_VERSION__: string;
