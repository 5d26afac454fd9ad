// Keeps the support library non-empty until the fixture lands.
