process.env.TEST_DATABASE = 'mariadb';
