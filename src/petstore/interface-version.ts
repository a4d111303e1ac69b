/**
 * The interface version the Petstore serves. Its own module because the routes need it too (it
 * is part of every ETag) and the document imports the routes.
 */
export const INTERFACE_VERSION = '1.0.0';
